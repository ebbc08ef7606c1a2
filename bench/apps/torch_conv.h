// The libtorch baseline of bench_cnn_layers (torch_conv.cpp, built only when Debian's
// libtorch-dev is installed): the same conv2d + bias + relu through ATen, whose CPU convolution
// is oneDNN, on channels-last (NHWC) tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace torch_baseline {

struct ConvLayer {
  int64_t n, h, w, c, k, o, stride;
};

// Seconds per call on `threads` threads (the same timing loop as agc's rows), and the NHWC
// result of one call in `out`. nullopt when the bench was built without libtorch.
std::optional<double> conv_layer_seconds(const ConvLayer& g, const std::vector<float>& x_nhwc,
                                         const std::vector<float>& w_hwio, const std::vector<float>& bias, int threads,
                                         std::vector<float>* out);

}  // namespace torch_baseline
