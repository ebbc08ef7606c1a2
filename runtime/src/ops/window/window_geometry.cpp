#include "window_geometry.h"

#include <fmt/format.h>

#include "../type_rules/type_rules.h"

namespace ag::detail {

AxisWindow window_axis(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  AxisWindow a;
  if (in < 0 || k < 0) return a;
  const int64_t span = (k - 1) * dilation + 1;
  if (same) {
    // TensorFlow's SAME: ceil(in / stride) outputs, the odd padding element after.
    a.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((a.out - 1) * stride + span - in, 0);
    a.pad_before = total / 2;
    a.pad_after = total - a.pad_before;
  } else {
    a.out = in >= span ? (in - span) / stride + 1 : in - span;  // <= 0: the window does not fit
  }
  return a;
}

namespace {

// A dim both sides may know: the known one, or a ValueError when they differ.
int64_t agree(int64_t a, int64_t b, OpKind op, SourceLoc loc, const char* what) {
  if (a >= 0 && b >= 0 && a != b) value_error(op, loc, fmt::format("{} differ: {} vs {}", what, a, b));
  return a >= 0 ? a : b;
}

void require_rank4(const Shape& s, OpKind op, SourceLoc loc, const char* which) {
  if (s.rank() != 4) value_error(op, loc, fmt::format("{} must have rank 4, got {}", which, s.str()));
}

// The output's spatial dims, and the check that the window fits the input.
void place_windows(WindowGeometry& g, bool same, OpKind op, SourceLoc loc) {
  const AxisWindow h = window_axis(g.ih, g.kh, g.sh, g.dh, same), w = window_axis(g.iw, g.kw, g.sw, g.dw, same);
  if ((g.ih >= 0 && h.out <= 0) || (g.iw >= 0 && w.out <= 0))
    value_error(op, loc, fmt::format("a {}x{} window (dilated: {}x{}) does not fit the input's {}x{} with VALID padding",
                                     g.kh, g.kw, (g.kh - 1) * g.dh + 1, (g.kw - 1) * g.dw + 1, g.ih, g.iw));
  g.oh = h.out;
  g.ow = w.out;
  g.pt = h.pad_before;
  g.pb = h.pad_after;
  g.pl = w.pad_before;
  g.pr = w.pad_after;
}

void check_attrs(OpKind op, const Attrs& a, SourceLoc loc) {
  if (a.window().rank() != 4) throw InternalError(fmt::format("{}: window attrs {}", op_name(op), a.window().str()));
  for (int64_t v : a.window())
    if (v < 1)
      value_error(op, loc, fmt::format("{} must be positive, got {}", is_conv(op) ? "strides and dilations" : "ksize and strides",
                                       a.window().str()));
  if (a.padding() != kPaddingValid && a.padding() != kPaddingSame)
    throw InternalError(fmt::format("{}: padding {}", op_name(op), a.padding()));
}

}  // namespace

WindowGeometry window_geometry(OpKind op, std::span<const Shape> in, const Attrs& a, SourceLoc loc) {
  check_attrs(op, a, loc);
  const Shape& w = a.window();
  WindowGeometry g;
  // The forward op's input and filter.
  Shape x, f;
  switch (op) {
    case OpKind::Conv2D:
    case OpKind::FusedConv2D:  // (and its bias, checked by its type rule)
      x = in[0];
      f = in[1];
      require_rank4(x, op, loc, "the input");
      require_rank4(f, op, loc, "the filter [height, width, in_channels, out_channels]");
      break;
    case OpKind::Conv2DBackpropInput:
      f = in[1];
      x = in.size() == 3 ? in[2] : a.shape;
      require_rank4(in[0], op, loc, "the input");
      require_rank4(f, op, loc, "the filter [height, width, output_channels, in_channels]");
      require_rank4(x, op, loc, "output_shape");
      x[0] = agree(x[0], in[0][0], op, loc, "batch sizes of output_shape and the input");
      break;
    case OpKind::Conv2DBackpropFilter:
      x = in[0];
      f = in[2];
      require_rank4(x, op, loc, "the input");
      require_rank4(in[1], op, loc, "the output gradient");
      require_rank4(f, op, loc, "the filter");
      break;
    case OpKind::MaxPoolGradGrad:  // (x, the gradient of x's gradient: x's shape)
      x = in[0];
      require_rank4(x, op, loc, "the input");
      if (!in[1].is_compatible_with(x))
        value_error(op, loc, fmt::format("the gradient {} must have the input's shape {}", in[1].str(), x.str()));
      break;
    default:
      x = in[0];
      require_rank4(x, op, loc, "the input");
      if (in.size() == 2) require_rank4(in[1], op, loc, "the output gradient");
      break;
  }
  g.n = x[0];
  g.ih = x[1];
  g.iw = x[2];
  if (is_conv(op)) {
    g.kh = f[0];
    g.kw = f[1];
    g.ic = agree(x[3], f[2], op, loc, "input channels of the input and the filter");
    g.oc = f[3];
    g.sh = w[0];
    g.sw = w[1];
    g.dh = w[2];
    g.dw = w[3];
  } else {
    g.ic = g.oc = x[3];
    g.kh = w[0];
    g.kw = w[1];
    g.sh = w[2];
    g.sw = w[3];
  }
  place_windows(g, a.padding() == kPaddingSame, op, loc);
  // The output gradient (or conv2d_transpose's input) against the forward op's output.
  const Shape* dy = nullptr;
  if (op == OpKind::Conv2DBackpropInput)
    dy = &in[0];
  else if (op == OpKind::Conv2DBackpropFilter || op == OpKind::MaxPoolGrad || op == OpKind::AvgPoolGrad)
    dy = &in[1];
  if (dy) {
    const Shape& d = *dy;
    const char* what = op == OpKind::Conv2DBackpropInput ? "the input" : "the output gradient";
    g.n = agree(g.n, d[0], op, loc, fmt::format("batch sizes of {} and the result", what).c_str());
    g.oc = agree(g.oc, d[3], op, loc, fmt::format("channels of {} and the filter's outputs", what).c_str());
    if ((g.oh >= 0 && d[1] >= 0 && g.oh != d[1]) || (g.ow >= 0 && d[2] >= 0 && g.ow != d[2]))
      value_error(op, loc, fmt::format("{} is {}, but a window over {} gives {}x{} outputs", what, d.str(),
                                       g.input_shape().str(), g.oh, g.ow));
    if (g.oh < 0) g.oh = d[1];
    if (g.ow < 0) g.ow = d[2];
  }
  return g;
}

Shape window_result_shape(OpKind op, const WindowGeometry& g) {
  switch (op) {
    case OpKind::Conv2D:
    case OpKind::FusedConv2D:
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::MaxPoolGradGrad: return g.output_shape();
    case OpKind::Conv2DBackpropFilter: return g.filter_shape();
    default: return g.input_shape();  // Conv2DBackpropInput, the pools' gradients
  }
}

}  // namespace ag::detail
