// Type rules of reductions, scans (cumsum, cumprod), arg-reductions and matmul.
#include "type_rules.h"

#include <algorithm>

namespace ag::detail {

TensorType type_rule_scan(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  require_numeric(op, in[0], "the operand", loc);
  if (in[0].has_unknown_rank()) value_error(op, loc, "the tensor has an unknown rank; give it one with ag::ensure_shape");
  if (in[0].shape.rank() == 0) value_error(op, loc, "needs at least one dim, got a scalar");
  normalize_axis(attrs.axis, in[0].shape.rank(), op, loc);
  if (attrs.scan_flags().rank() != 2) value_error(op, loc, "needs its {exclusive, reverse} flags");
  return in[0];
}

TensorType type_rule_reduce(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const bool boolean = op == OpKind::ReduceAny || op == OpKind::ReduceAll;
  if (boolean && in[0].dtype != DType::Bool) type_error(op, loc, "needs a bool tensor, got " + describe(in[0]));
  if (!boolean) require_numeric(op, in[0], "the operand", loc);
  Shape out;
  for (int64_t i = 0; i < in[0].shape.rank(); ++i) {
    const bool reduced = std::find(attrs.axes().begin(), attrs.axes().end(), i) != attrs.axes().end();
    if (!reduced) out.push_back(in[0].shape[i]);
    else if (attrs.keepdims) out.push_back(1);
  }
  return {in[0].dtype, out};
}

TensorType type_rule_arg_reduce(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  require_numeric(op, in[0], "the operand", loc);
  if (in[0].shape.rank() == 0) value_error(op, loc, "needs a tensor of rank >= 1, got a scalar");
  Shape out = in[0].shape;
  out.erase(static_cast<size_t>(normalize_axis(attrs.axis, in[0].shape.rank(), op, loc)));
  return {DType::Int64, out};
}

TensorType type_rule_matmul(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  require_same_dtype(op, in[0], in[1], loc);
  require_numeric(op, in[0], "each operand", loc);
  if (in[0].dtype == DType::UInt8 || in[0].dtype == DType::Int8)
    type_error(op, loc, fmt::format("does not multiply {} matrices (their products overflow 8 bits); "
                                    "use ag::cast(x, ag::int32) or ag::float32", dtype_name(in[0].dtype)));
  const Shape &a = in[0].shape, &b = in[1].shape;
  if (a.rank() < 2 || b.rank() < 2)
    value_error(op, loc, fmt::format("needs operands of rank >= 2, got {} and {}", a.str(), b.str()));
  const bool ta = attrs.transpose_a(), tb = attrs.transpose_b();
  const int64_t k1 = a[a.rank() - (ta ? 2 : 1)], k2 = b[b.rank() - (tb ? 1 : 2)];
  if (k1 >= 0 && k2 >= 0 && k1 != k2)
    value_error(op, loc, fmt::format("inner dimensions differ: {}{} x {}{} (a{} has {} columns, b{} has {} rows)", a.str(),
                                     ta ? "^T" : "", b.str(), tb ? "^T" : "", ta ? "^T" : "", k1, tb ? "^T" : "", k2));
  Shape batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), op, loc);
  batch.push_back(a[a.rank() - (ta ? 1 : 2)]);
  batch.push_back(b[b.rank() - (tb ? 2 : 1)]);
  return {in[0].dtype, batch};
}

}  // namespace ag::detail
