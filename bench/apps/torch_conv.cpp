// libtorch's conv2d + bias + relu for bench_cnn_layers (torch_conv.h). ATen's convolution on a
// channels-last input runs oneDNN's NHWC kernels, as TensorFlow's and agc's float32 ones do.
// SAME padding: symmetric k/2 (TensorFlow's for stride 1; for stride 2 on an even input TensorFlow
// pads one row less at the top, the same work, so only stride-1 results are compared).
#include "torch_conv.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "bench_util.h"

namespace torch_baseline {

std::optional<double> conv_layer_seconds(const ConvLayer& g, const std::vector<float>& x_nhwc,
                                         const std::vector<float>& w_hwio, const std::vector<float>& bias, int threads,
                                         std::vector<float>* out) {
  at::set_num_threads(threads);
  const auto opts = at::TensorOptions().dtype(at::kFloat);
  // NHWC data seen as NCHW with channels-last strides; HWIO filters permuted to OIHW.
  const at::Tensor x = at::from_blob(const_cast<float*>(x_nhwc.data()), {g.n, g.h, g.w, g.c}, opts)
                           .permute({0, 3, 1, 2})
                           .contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor w = at::from_blob(const_cast<float*>(w_hwio.data()), {g.k, g.k, g.c, g.o}, opts)
                           .permute({3, 2, 0, 1})
                           .contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor b = at::from_blob(const_cast<float*>(bias.data()), {g.o}, opts).clone();
  at::NoGradGuard no_grad;
  auto layer = [&] { return at::relu(at::conv2d(x, w, b, {g.stride, g.stride}, {g.k / 2, g.k / 2})); };
  const at::Tensor y = layer().permute({0, 2, 3, 1}).contiguous();
  out->assign(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
  return agbench::time_per_call([&] { agbench::keep(layer()); });
}

}  // namespace torch_baseline
