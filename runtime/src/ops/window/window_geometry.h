// The geometry of a sliding-window op (ops.def's Window family): conv2d, its two backprop ops,
// and pooling, on NHWC data with HWIO filters. One description serves the type rules (static
// dims, -1 = unknown), the eager kernels and the JIT's run-time helpers.
#pragma once

#include <cstdint>
#include <span>

#include "ag/detail/ops_internal.h"

namespace ag::detail {

// How the attrs of a Window op are laid out:
//   Conv2D, FusedConv2D, Conv2DBackprop*: window() = {stride_h, stride_w, dilation_h, dilation_w}
//   MaxPool, AvgPool, *PoolGrad: window() = {ksize_h, ksize_w, stride_h, stride_w}
//   padding() = 0 (VALID) or 1 (SAME), as TensorFlow computes SAME (extra padding after).
//   Conv2DBackpropInput with two inputs: shape = its result's shape (conv2d_transpose's
//   output_shape); with three, the third input's shape is (the gradient of conv2d's input).
//   Conv2DBackpropFilter(x, dy, filter): the filter is read for its shape only.
inline constexpr int64_t kPaddingValid = 0;
inline constexpr int64_t kPaddingSame = 1;

// Sizes of one spatial axis: the output size and the padding before and after.
struct AxisWindow {
  int64_t out = -1, pad_before = 0, pad_after = 0;
};
// -1 when `in` is unknown; out <= 0 when the window does not fit (VALID on a small input).
AxisWindow window_axis(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same);

// A convolution x [n, ih, iw, ic] * w [kh, kw, ic, oc] -> y [n, oh, ow, oc]; a pooling has
// ic == oc and no filter. Every op of the family is described by its forward op's geometry.
struct WindowGeometry {
  int64_t n = -1, ih = -1, iw = -1, ic = -1;
  int64_t kh = -1, kw = -1, oc = -1;
  int64_t oh = -1, ow = -1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;

  bool operator==(const WindowGeometry&) const = default;
  // [n, ih, iw, ic], [kh, kw, ic, oc], [n, oh, ow, oc]
  Shape input_shape() const { return Shape{n, ih, iw, ic}; }
  Shape filter_shape() const { return Shape{kh, kw, ic, oc}; }
  Shape output_shape() const { return Shape{n, oh, ow, oc}; }
};

// The convolutions (strides and dilations in attrs.window()), not the pools.
inline bool is_conv(OpKind op) {
  return op == OpKind::Conv2D || op == OpKind::FusedConv2D || op == OpKind::Conv2DBackpropInput ||
         op == OpKind::Conv2DBackpropFilter;
}

// The geometry of `op` on inputs of these shapes (static: unknown dims stay -1), checked:
// ranks, channels that must agree, windows that must fit, a gradient's dims against its
// forward op's. Errors are ValueErrors naming the op, the shapes and `loc`.
WindowGeometry window_geometry(OpKind op, std::span<const Shape> inputs, const Attrs& attrs, SourceLoc loc);

// The shape of `op`'s result for that geometry.
Shape window_result_shape(OpKind op, const WindowGeometry& g);

}  // namespace ag::detail
