// Type rules of the elementwise ops: unary, cast, binary arithmetic, comparisons, logical ops, where.
#include "type_rules.h"

namespace ag::detail {

TensorType type_rule_identity(OpKind, std::span<const TensorType> in, const Attrs&, SourceLoc) { return in[0]; }

TensorType type_rule_unary_numeric(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  require_numeric(op, in[0], "the operand", loc);
  return in[0];
}

TensorType type_rule_unary_float(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (!is_floating(in[0].dtype))
    type_error(op, loc, fmt::format("needs a floating-point tensor, got {}; use ag::cast(x, ag::float32)",
                                    describe(in[0])));
  return in[0];
}

TensorType type_rule_unary_bool(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (in[0].dtype != DType::Bool) type_error(op, loc, "needs a bool tensor, got " + describe(in[0]));
  return in[0];
}

TensorType type_rule_cast(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  if (in[0].dtype == DType::List) type_error(op, loc, "cannot cast a TensorArray");
  return {attrs.dtype, in[0].shape};
}

TensorType type_rule_binary(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  require_same_dtype(op, in[0], in[1], loc);
  require_numeric(op, in[0], "each operand", loc);
  return {in[0].dtype, broadcast_shapes(in[0].shape, in[1].shape, op, loc)};
}

// A binary op defined on floating-point values only (atan2).
TensorType type_rule_binary_float(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const TensorType t = type_rule_binary(op, in, attrs, loc);
  if (!is_floating(t.dtype))
    type_error(op, loc, fmt::format("needs floating-point tensors, got {} and {}; use ag::cast(x, ag::float32)",
                                    describe(in[0]), describe(in[1])));
  return t;
}

TensorType type_rule_compare(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  require_same_dtype(op, in[0], in[1], loc);
  if (in[0].dtype == DType::List || (in[0].dtype == DType::Bool && op != OpKind::Equal && op != OpKind::NotEqual))
    type_error(op, loc, "cannot order tensors of dtype " + std::string(dtype_name(in[0].dtype)));
  return {DType::Bool, broadcast_shapes(in[0].shape, in[1].shape, op, loc)};
}

TensorType type_rule_logical(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (in[0].dtype != DType::Bool || in[1].dtype != DType::Bool)
    type_error(op, loc, fmt::format("needs bool operands, got {} and {}", describe(in[0]), describe(in[1])));
  return {DType::Bool, broadcast_shapes(in[0].shape, in[1].shape, op, loc)};
}

TensorType type_rule_select(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  if (in[0].dtype != DType::Bool) type_error(op, loc, "the condition must be a bool tensor, got " + describe(in[0]));
  if (in[1].dtype != in[2].dtype)
    type_error(op, loc, fmt::format("x and y have different dtypes: {} and {}; use ag::cast", describe(in[1]),
                                    describe(in[2])));
  Shape s = broadcast_shapes(in[1].shape, in[2].shape, op, loc);
  return {in[1].dtype, broadcast_shapes(in[0].shape, s, op, loc)};
}

}  // namespace ag::detail
