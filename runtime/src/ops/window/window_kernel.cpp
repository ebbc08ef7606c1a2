// The Window family on buffers (runtime_kernels.cpp): float32 convolutions by oneDNN, float64
// ones and pooling by agc's loops (window_loops.cpp).
#include <algorithm>
#include <vector>

#include "../kernels.h"
#include "ag/detail/kernel_set.h"
#include "conv_onednn.h"
#include "window_loops.h"

namespace ag::detail {
namespace {

template <class T>
const T* data(const Tensor& t) {
  return static_cast<const T*>(impl_of(t)->data);
}

// The rest of a FusedConv2D after its convolution, in place on y [rows, oc]: the level's
// vector kernel (ops/isa/conv_epilogue.cpp). oneDNN's relu post-op maps NaN to 0, where
// ag::relu keeps it: the relu is always this.
template <class T>
void conv_epilogue(T* y, const T* bias, bool relu, int64_t rows, int64_t oc) {
  if constexpr (std::is_same_v<T, float>) kernels().conv_epilogue_f32(y, bias, relu, rows, oc);
  else kernels().conv_epilogue_f64(y, bias, relu, rows, oc);
}

// FusedConv2D(x, w[, bias]): oneDNN adds the bias where it can (brgconv, float32); else the
// convolution, then the epilogue.
template <class T>
void fused_conv2d(const WindowGeometry& g, std::span<const Tensor> in, bool relu, T* out) {
  const T *x = data<T>(in[0]), *w = data<T>(in[1]), *bias = in.size() > 2 ? data<T>(in[2]) : nullptr;
  const int64_t rows = g.n * g.oh * g.ow;
  if constexpr (std::is_same_v<T, float>) {
    if (bias && onednn_conv_bias(g, x, w, bias, out)) {
      if (relu) conv_epilogue<T>(out, nullptr, true, rows, g.oc);
      return;
    }
    if (!onednn_conv(OpKind::Conv2D, g, x, w, out)) conv2d_loops(g, x, w, out);
  } else {
    conv2d_loops(g, x, w, out);
  }
  if (bias || relu) conv_epilogue<T>(out, bias, relu, rows, g.oc);
}

template <class T>
void compute(OpKind op, const WindowGeometry& g, std::span<const Tensor> in, const Attrs& attrs, T* out) {
  if (op == OpKind::FusedConv2D) return fused_conv2d(g, in, attrs.fused_relu(), out);
  const T* a = data<T>(in[0]);
  const T* b = in.size() > 1 ? data<T>(in[1]) : nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if ((op == OpKind::Conv2D || op == OpKind::Conv2DBackpropInput || op == OpKind::Conv2DBackpropFilter) &&
        onednn_conv(op, g, a, b, out))
      return;
  }
  switch (op) {
    case OpKind::Conv2D: return conv2d_loops(g, a, b, out);
    case OpKind::Conv2DBackpropInput: return conv2d_backprop_input_loops(g, a, b, out);
    case OpKind::Conv2DBackpropFilter: return conv2d_backprop_filter_loops(g, a, b, out);
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::MaxPoolGrad:
    case OpKind::MaxPoolGradGrad:
    case OpKind::AvgPoolGrad: return pool_loops(op, g, a, b, out);
    default: throw InternalError(std::string("compute_window: ") + std::string(op_name(op)));
  }
}

}  // namespace

void compute_window(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out) {
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  const WindowGeometry g = window_geometry(op, shapes, attrs, SourceLoc{});
  // An empty batch or channel dim: nothing to compute (the loops and oneDNN want neither).
  const int64_t result_elements = window_result_shape(op, g).num_elements();
  if (result_elements == 0) return;
  if (g.n == 0 || g.oh == 0 || g.ow == 0 || g.ic == 0 || g.oc == 0) {
    // A gradient of an empty forward op is zeros; a FusedConv2D over no input channels, its
    // epilogue of zeros.
    auto zeros = [&](auto zero) {
      using T = decltype(zero);
      std::fill_n(static_cast<T*>(out), result_elements, zero);
      if (op == OpKind::FusedConv2D)
        conv_epilogue(static_cast<T*>(out), in.size() > 2 ? data<T>(in[2]) : nullptr, attrs.fused_relu(), result_elements / g.oc, g.oc);
    };
    if (in[0].dtype() == DType::Float32) zeros(0.0f);
    else zeros(0.0);
    return;
  }
  if (in[0].dtype() == DType::Float32)
    compute<float>(op, g, in, attrs, static_cast<float*>(out));
  else
    compute<double>(op, g, in, attrs, static_cast<double*>(out));
}

}  // namespace ag::detail
