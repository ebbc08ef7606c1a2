// Type rules of the collectives (ag/distribute.h): all_reduce and broadcast keep their operand's
// type; all_gather stacks the processes' operands along the first axis.
#include "type_rules.h"

#include "ag/distribute.h"

namespace ag::detail {

TensorType type_rule_collective(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const TensorType& t = in[0];
  if (t.dtype == DType::List) type_error(op, loc, "a collective takes a tensor, got a TensorArray");
  if (op == OpKind::AllReduce) {
    const auto reduce = static_cast<distribute::ReduceOp>(attrs.axis);
    if (attrs.axis < 0 || attrs.axis > static_cast<int64_t>(distribute::ReduceOp::min))
      type_error(op, loc, fmt::format("{} is not a ReduceOp", attrs.axis));
    if (t.dtype != DType::Float32 && t.dtype != DType::Float64 && t.dtype != DType::Int32 && t.dtype != DType::Int64)
      type_error(op, loc, fmt::format("reduces float32, float64, int32 and int64 tensors, got {}", describe(t)));
    if (reduce == distribute::ReduceOp::mean && !is_floating(t.dtype))
      type_error(op, loc, fmt::format("ReduceOp::mean needs a floating-point tensor, got {} (use sum)", describe(t)));
    return t;
  }
  if (op == OpKind::AllGather) {
    if (t.has_unknown_rank()) return t;
    if (t.shape.rank() == 0) type_error(op, loc, "gathers along the first axis: the tensor needs rank >= 1, got a scalar");
    Shape s = t.shape;
    if (s[0] >= 0) s[0] *= attrs.axis;
    return {t.dtype, s};
  }
  return t;
}

}  // namespace ag::detail
