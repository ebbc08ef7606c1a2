// ag::nn's convolutions and pooling: the Window ops of ops.def, built from TensorFlow's
// arguments (ops/window/window_geometry.h has the attrs' layout).
#include <fmt/format.h>

#include "ag/detail/ops_internal.h"
#include "ag/nn.h"
#include "type_rules/type_rules.h"
#include "window/window_geometry.h"

namespace ag::nn {
namespace {

using detail::apply_op;

int64_t padding_of(std::string_view padding, OpKind op, SourceLoc loc) {
  if (padding == "VALID") return detail::kPaddingValid;
  if (padding == "SAME") return detail::kPaddingSame;
  detail::value_error(op, loc, fmt::format("padding must be \"SAME\" or \"VALID\", got \"{}\"", padding));
}

Attrs conv_attrs(Size2D strides, std::string_view padding, Size2D dilations, OpKind op, SourceLoc loc) {
  Attrs a;
  a.window() = Shape{strides.h, strides.w, dilations.h, dilations.w};
  a.padding() = padding_of(padding, op, loc);
  return a;
}

Tensor pool(OpKind op, const Tensor& input, Size2D ksize, Size2D strides, std::string_view padding, SourceLoc loc) {
  Attrs a;
  a.window() = Shape{ksize.h, ksize.w, strides.h, strides.w};
  a.padding() = padding_of(padding, op, loc);
  return apply_op(op, {input}, a, loc);
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& filters, Size2D strides, std::string_view padding, Size2D dilations,
              Loc loc) {
  return apply_op(OpKind::Conv2D, {input, filters}, conv_attrs(strides, padding, dilations, OpKind::Conv2D, loc), loc);
}

Tensor conv1d(const Tensor& input, const Tensor& filters, int64_t stride, std::string_view padding, int64_t dilation,
              Loc loc) {
  // As TensorFlow computes it: a conv2d over [N, 1, W, C] with a [1, K, C_in, C_out] filter.
  const Tensor y = conv2d(expand_dims(input, 1, loc), expand_dims(filters, 0, loc), Size2D{1, stride}, padding,
                          Size2D{1, dilation}, loc);
  return squeeze(y, {1}, loc);
}

Tensor conv2d_transpose(const Tensor& input, const Tensor& filters, const Shape& output_shape, Size2D strides,
                        std::string_view padding, Size2D dilations, Loc loc) {
  Attrs a = conv_attrs(strides, padding, dilations, OpKind::Conv2DBackpropInput, loc);
  for (int64_t d : output_shape)
    if (d < 0)
      detail::value_error(OpKind::Conv2DBackpropInput, loc,
                          fmt::format("output_shape must be known, got {}", output_shape.str()));
  a.shape = output_shape;
  return apply_op(OpKind::Conv2DBackpropInput, {input, filters}, a, loc);
}

Tensor max_pool2d(const Tensor& input, Size2D ksize, Size2D strides, std::string_view padding, Loc loc) {
  return pool(OpKind::MaxPool, input, ksize, strides, padding, loc);
}

Tensor avg_pool2d(const Tensor& input, Size2D ksize, Size2D strides, std::string_view padding, Loc loc) {
  return pool(OpKind::AvgPool, input, ksize, strides, padding, loc);
}

}  // namespace ag::nn
