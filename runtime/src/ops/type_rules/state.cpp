// Type rules of the stateful ops (print, assert, variables, random draws) and the TensorArray ops.
#include "type_rules.h"

#include "ag/detail/variable_state.h"
#include "../kernels.h"

namespace ag::detail {

// No outputs; the type is unused.
TensorType type_rule_print(OpKind, std::span<const TensorType>, const Attrs&, SourceLoc) { return {DType::Bool, Shape{}}; }

TensorType type_rule_assert(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (in.empty() || in[0].dtype != DType::Bool)
    type_error(op, loc, fmt::format("the condition must be a bool tensor, got {}", in.empty() ? "nothing" : describe(in[0])));
  return {DType::Bool, Shape{}};  // no outputs
}

// PureCallback / IoCallback: the result spec the user gave (ag/callback.h).
TensorType type_rule_callback(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  for (const TensorType& t : in)
    if (t.dtype == DType::List) type_error(op, loc, "a callback takes tensors, got a TensorArray");
  return {attrs.dtype, attrs.shape};
}

TensorType type_rule_read_variable(OpKind, std::span<const TensorType>, const Attrs& attrs, SourceLoc) {
  return {attrs.variable->dtype, attrs.variable->shape};
}

TensorType type_rule_random(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return random_type(op, in.size(), attrs, loc);
}

TensorType type_rule_assign_variable(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const auto& v = *attrs.variable;
  if (in[0].dtype != v.dtype)
    type_error(op, loc, fmt::format("{} is {}, the new value is {}", v.describe(), dtype_name(v.dtype),
                                    describe(in[0])));
  if (op != OpKind::AssignVariable && !is_numeric(v.dtype))
    type_error(op, loc, v.describe() + " is not numeric");
  if (op != OpKind::AssignVariable && is_storage_dtype(v.dtype))
    type_error(op, loc, fmt::format("{} is {}, which is only stored; write v.assign(v + x), which computes in {}",
                                    v.describe(), dtype_name(v.dtype), dtype_name(compute_dtype(v.dtype))));
  const bool fits = in[0].shape.rank() == 0 ||
                    (op == OpKind::AssignVariable ? v.shape.is_compatible_with(in[0].shape)
                                                  : broadcast_shapes(v.shape, in[0].shape, op, loc).is_compatible_with(v.shape));
  if (!fits)
    value_error(op, loc, fmt::format("{} has shape {}, the new value has shape {}; a Variable's shape never changes",
                                     v.describe(), v.shape.str(), in[0].shape.str()));
  return {v.dtype, v.shape};
}

TensorType type_rule_list_write(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (!is_index_dtype(in[1].dtype) || in[1].shape.rank() != 0)
    type_error(op, loc, "the index must be an integer scalar, got " + describe(in[1]));
  if (in[2].dtype != in[0].elem_dtype)
    type_error(op, loc, fmt::format("the TensorArray holds {} but the value is {}", dtype_name(in[0].elem_dtype),
                                    describe(in[2])));
  TensorType out = in[0];
  // Element shapes must agree; the first write types an untyped list.
  if (out.rank_unknown) {
    out.shape = in[2].shape;
    out.rank_unknown = false;
  } else if (out.elem_shape_varies && out.shape.rank() == in[2].shape.rank()) {
    out = join_types(out, TensorType{out.dtype, in[2].shape, out.elem_dtype, false, true});
  } else if (out.shape.rank() == in[2].shape.rank()) {
    for (int64_t i = 0; i < out.shape.rank(); ++i) {
      if (out.shape[i] >= 0 && in[2].shape[i] >= 0 && out.shape[i] != in[2].shape[i])
        value_error(op, loc, fmt::format("the TensorArray holds elements of shape {} but the value has shape {}",
                                         out.shape.str(), in[2].shape.str()));
      if (out.shape[i] < 0) out.shape[i] = in[2].shape[i];
    }
  } else {
    value_error(op, loc, fmt::format("the TensorArray holds elements of shape {} but the value has shape {}",
                                     out.shape.str(), in[2].shape.str()));
  }
  return out;
}

TensorType type_rule_list_read(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (!is_index_dtype(in[1].dtype) || in[1].shape.rank() != 0)
    type_error(op, loc, "the index must be an integer scalar, got " + describe(in[1]));
  // (An untyped list: TensorArray::read refuses it while tracing; at run time the kernel
  // reports the element as never written.)
  return {in[0].elem_dtype, in[0].shape};
}

TensorType type_rule_list_stack(OpKind, std::span<const TensorType> in, const Attrs& attrs, SourceLoc) {
  Shape out = in[0].rank_unknown ? attrs.shape : in[0].shape;
  out.insert(0, Shape::kUnknown);
  return {in[0].elem_dtype, out};
}

TensorType type_rule_list_size(OpKind, std::span<const TensorType>, const Attrs&, SourceLoc) { return {DType::Int32, Shape{}}; }

}  // namespace ag::detail
