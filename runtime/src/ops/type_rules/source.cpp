// Type rules of the source ops: constants, ranges, fills.
#include "type_rules.h"

namespace ag::detail {

TensorType type_rule_constant(OpKind, std::span<const TensorType>, const Attrs& attrs, SourceLoc) {
  return type_of(attrs.value);
}

TensorType type_rule_range(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  for (const auto& t : in) {
    require_numeric(op, t, "each of start, limit and delta", loc);
    if (t.shape.rank() != 0) value_error(op, loc, "start, limit and delta must be scalars, got " + describe(t));
  }
  if (in[0].dtype != in[1].dtype || in[0].dtype != in[2].dtype)
    type_error(op, loc, fmt::format("start, limit and delta have different dtypes ({}, {}, {})",
                                    dtype_name(in[0].dtype), dtype_name(in[1].dtype), dtype_name(in[2].dtype)));
  return {in[0].dtype, Shape{Shape::kUnknown}};
}

TensorType type_rule_fill(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  if (in[0].shape.rank() != 0) value_error(op, loc, "the fill value must be a scalar, got " + describe(in[0]));
  return {in[0].dtype, attrs.shape};
}

TensorType type_rule_fill_like(OpKind, std::span<const TensorType> in, const Attrs& attrs, SourceLoc) {
  return {attrs.dtype, in[0].shape};
}

}  // namespace ag::detail
