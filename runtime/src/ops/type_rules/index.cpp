// Type rules of the Index family: argsort, take_along_axis (and its gradient), and the row
// scatters that tensor_scatter_nd_* and unsorted_segment_* reduce to.
#include "type_rules.h"

namespace ag::detail {
namespace {

void require_index_dtype(OpKind op, const TensorType& t, const char* which, SourceLoc loc) {
  if (t.dtype != DType::Int32 && t.dtype != DType::Int64)
    type_error(op, loc, fmt::format("{} must be int32 or int64, got {}", which, describe(t)));
}

void require_known_rank(OpKind op, const TensorType& t, const char* which, SourceLoc loc) {
  if (t.rank_unknown) value_error(op, loc, fmt::format("{} must have a known rank", which));
}

int64_t agree(int64_t a, int64_t b, OpKind op, SourceLoc loc, const std::string& what) {
  if (a >= 0 && b >= 0 && a != b) value_error(op, loc, fmt::format("{}: {} vs {}", what, a, b));
  return a >= 0 ? a : b;
}

}  // namespace

TensorType type_rule_argsort(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  require_numeric(op, in[0], "the values", loc);
  require_known_rank(op, in[0], "the values", loc);
  if (in[0].shape.rank() == 0) value_error(op, loc, "needs values of rank 1 or more, got a scalar");
  normalize_axis(attrs.axis, in[0].shape.rank(), op, loc);
  return {DType::Int32, in[0].shape};
}

// x, indices of x's rank with the same dims but along the axis -> indices' shape, x's dtype.
TensorType type_rule_take_along_axis(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const TensorType &x = in[0], &idx = in[1];
  require_index_dtype(op, idx, "indices", loc);
  require_known_rank(op, x, "x", loc);
  require_known_rank(op, idx, "indices", loc);
  if (x.shape.rank() != idx.shape.rank())
    value_error(op, loc, fmt::format("indices must have x's rank: {} vs {}", describe(idx), describe(x)));
  const int64_t axis = normalize_axis(attrs.axis, x.shape.rank(), op, loc);
  Shape out = idx.shape;
  for (int64_t d = 0; d < out.rank(); ++d)
    if (d != axis) out[d] = agree(x.shape[d], idx.shape[d], op, loc, fmt::format("dim {} of x and indices differ", d));
  if (op == OpKind::TakeAlongAxisGrad) {  // (x, indices, dy): x's type
    require_same_dtype(op, x, in[2], loc);
    return {x.dtype, x.shape};
  }
  return {x.dtype, out};
}

TensorType type_rule_take_along_axis_grad(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return type_rule_take_along_axis(op, in, attrs, loc);
}

// base [rows, r...], indices [K], updates [K, r...] -> base's type.
TensorType type_rule_scatter_rows(OpKind op, std::span<const TensorType> in, const Attrs&, SourceLoc loc) {
  const TensorType &base = in[0], &idx = in[1], &upd = in[2];
  require_same_dtype(op, base, upd, loc);
  require_index_dtype(op, idx, "indices", loc);
  for (const TensorType* t : {&base, &idx, &upd}) require_known_rank(op, *t, "each operand", loc);
  if ((op == OpKind::UnsortedSegmentSum || op == OpKind::UnsortedSegmentMax || op == OpKind::TensorScatterAdd))
    require_numeric(op, base, "the data", loc);
  if (base.shape.rank() < 1 || idx.shape.rank() != 1 || upd.shape.rank() != base.shape.rank())
    throw InternalError(fmt::format("{}: rows {} indices {} updates {}", op_name(op), describe(base), describe(idx), describe(upd)));
  agree(idx.shape[0], upd.shape[0], op, loc, "the number of indices and of update rows differ");
  for (int64_t d = 1; d < base.shape.rank(); ++d)
    agree(base.shape[d], upd.shape[d], op, loc, fmt::format("dim {} of the rows and the updates differ", d));
  return base;
}

}  // namespace ag::detail
