// Type rules of the sliding-window ops (conv2d, its gradients, pooling): float32 or float64
// operands of one dtype; the shapes by ops/window/window_geometry.cpp.
#include <vector>

#include "../window/window_geometry.h"
#include "type_rules.h"

namespace ag::detail {
namespace {

TensorType window_type(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  for (size_t k = 1; k < in.size(); ++k) require_same_dtype(op, in[0], in[k], loc);
  if (!is_floating(in[0].dtype))
    type_error(op, loc, fmt::format("needs floating-point tensors, got {}; use ag::cast(x, ag::float32)", describe(in[0])));
  std::vector<Shape> shapes;
  for (const TensorType& t : in) shapes.push_back(t.rank_unknown ? Shape{-1, -1, -1, -1} : t.shape);
  return {in[0].dtype, window_result_shape(op, window_geometry(op, shapes, attrs, loc))};
}

}  // namespace

TensorType type_rule_conv2d(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return window_type(op, in, attrs, loc);
}

// FusedConv2D(x, filter[, bias]): conv2d's type; the bias one value per output channel.
TensorType type_rule_fused_conv2d(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  if (in.size() != 2 && in.size() != 3)
    throw InternalError(fmt::format("{} takes 2 or 3 inputs, got {}", op_name(op), in.size()));
  const TensorType t = window_type(op, in.first(2), attrs, loc);
  if (in.size() == 3) {
    require_same_dtype(op, in[0], in[2], loc);
    const TensorType& b = in[2];
    const int64_t oc = t.shape.rank() == 4 ? t.shape[3] : -1;
    if (b.rank_unknown || b.shape.rank() != 1 || (b.shape[0] >= 0 && oc >= 0 && b.shape[0] != oc))
      throw InternalError(fmt::format("{}: bias {} for {} output channels", op_name(op), describe(b), oc));
  }
  return t;
}

TensorType type_rule_conv2d_backprop_input(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  if (in.size() != 2 && in.size() != 3)
    throw InternalError(fmt::format("{} takes 2 or 3 inputs, got {}", op_name(op), in.size()));
  return window_type(op, in, attrs, loc);
}

TensorType type_rule_conv2d_backprop_filter(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return window_type(op, in, attrs, loc);
}

TensorType type_rule_pool(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return window_type(op, in, attrs, loc);
}

TensorType type_rule_pool_grad(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return window_type(op, in, attrs, loc);
}

TensorType type_rule_pool_grad_grad(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  return window_type(op, in, attrs, loc);
}

}  // namespace ag::detail
