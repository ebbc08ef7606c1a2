// The Window family on buffers (runtime_kernels.cpp): float32 convolutions by oneDNN, float64
// ones and pooling by agc's loops (window_loops.cpp).
#include <vector>

#include "../kernels.h"
#include "conv_onednn.h"
#include "window_loops.h"

namespace ag::detail {
namespace {

template <class T>
const T* data(const Tensor& t) {
  return static_cast<const T*>(impl_of(t)->data);
}

template <class T>
void compute(OpKind op, const WindowGeometry& g, std::span<const Tensor> in, T* out) {
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
    // A gradient of an empty forward op is zeros.
    if (in[0].dtype() == DType::Float32)
      std::fill_n(static_cast<float*>(out), result_elements, 0.0f);
    else
      std::fill_n(static_cast<double*>(out), result_elements, 0.0);
    return;
  }
  if (in[0].dtype() == DType::Float32)
    compute<float>(op, g, in, static_cast<float*>(out));
  else
    compute<double>(op, g, in, static_cast<double*>(out));
}

}  // namespace ag::detail
