// bench_cnn_layers without libtorch-dev: no libtorch baseline (torch_conv.h).
#include "torch_conv.h"

namespace torch_baseline {

std::optional<double> conv_layer_seconds(const ConvLayer&, const std::vector<float>&, const std::vector<float>&,
                                         const std::vector<float>&, int, std::vector<float>*) {
  return std::nullopt;
}

}  // namespace torch_baseline
