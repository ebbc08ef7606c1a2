// Convolution layers as CNNs have them (conv2d + bias + relu, NHWC), in one AG_FUNCTION each:
// LeNet-5's two convolutions and a ResNet stage's 3x3 convolutions (stride 1 and 2), and a
// LeNet forward pass (conv, pool, conv, pool, dense). Against libtorch's conv2d (oneDNN, when
// Debian's libtorch-dev is installed: torch_conv.h) on 1 and 2 threads, and im2col + Eigen's
// GEMM, the classic hand-written CPU convolution, on one; all in the same run; and the first call.
//   build/bench/apps/bench_cnn_layers
#include <ag/ag.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "torch_conv.h"

using ag::Tensor;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// `stride` is a plain int: frozen into each trace, as a Python int is in tf.function.
AG_FUNCTION Tensor conv_layer(Tensor x, Tensor w, Tensor b, int stride) {
  return ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, stride, "SAME"), b));
}

AG_FUNCTION Tensor lenet(Tensor x, Tensor w1, Tensor w2, Tensor dense) {
  Tensor h = ag::nn::max_pool2d(ag::relu(ag::nn::conv2d(x, w1, 1, "VALID")), 2, 2, "VALID");
  h = ag::nn::max_pool2d(ag::relu(ag::nn::conv2d(h, w2, 1, "VALID")), 2, 2, "VALID");
  return ag::matmul(ag::reshape(h, {-1, 256}), dense);
}

struct Geometry {
  int64_t n, h, w, c, k, o, stride;
};

// im2col (SAME padding) then one GEMM with the HWIO filter as a [k*k*c, o] matrix, + bias, relu.
std::vector<float> conv_by_hand(const Geometry& g, const std::vector<float>& x, const std::vector<float>& w,
                                const std::vector<float>& b, RowMatrix& patches) {
  const int64_t oh = (g.h + g.stride - 1) / g.stride, ow = (g.w + g.stride - 1) / g.stride;
  const int64_t pad_h = std::max<int64_t>((oh - 1) * g.stride + g.k - g.h, 0) / 2;
  const int64_t pad_w = std::max<int64_t>((ow - 1) * g.stride + g.k - g.w, 0) / 2;
  patches.setZero(g.n * oh * ow, g.k * g.k * g.c);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float* row = patches.data() + ((n * oh + i) * ow + j) * g.k * g.k * g.c;
        for (int64_t a = 0; a < g.k; ++a) {
          const int64_t r = i * g.stride - pad_h + a;
          if (r < 0 || r >= g.h) continue;
          for (int64_t q = 0; q < g.k; ++q) {
            const int64_t col = j * g.stride - pad_w + q;
            if (col < 0 || col >= g.w) continue;
            const float* in = &x[static_cast<size_t>(((n * g.h + r) * g.w + col) * g.c)];
            std::copy(in, in + g.c, row + (a * g.k + q) * g.c);
          }
        }
      }
  const Eigen::Map<const RowMatrix> filter(w.data(), g.k * g.k * g.c, g.o);
  const Eigen::Map<const Eigen::RowVectorXf> bias(b.data(), g.o);
  std::vector<float> y(static_cast<size_t>(g.n * oh * ow * g.o));
  Eigen::Map<RowMatrix> out(y.data(), g.n * oh * ow, g.o);
  out.noalias() = patches * filter;
  out = (out.rowwise() + bias).cwiseMax(0.0f);
  return y;
}

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return v;
}

int main() {
  ag::set_num_threads(1);
  Eigen::setNbThreads(1);
  const std::vector<std::pair<const char*, Geometry>> layers = {
      {"LeNet conv1 32x28x28x1, 5x5 -> 6", {32, 28, 28, 1, 5, 6, 1}},
      {"LeNet conv2 32x12x12x6, 5x5 -> 16", {32, 12, 12, 6, 5, 16, 1}},
      {"ResNet 3x3 8x56x56x64 -> 64", {8, 56, 56, 64, 3, 64, 1}},
      {"ResNet 3x3/2 8x56x56x64 -> 128", {8, 56, 56, 64, 3, 128, 2}},
  };
  std::vector<agbench::Row> rows;
  for (const int threads : {1, 2}) {
    ag::set_num_threads(threads);
    for (const auto& [name, g] : layers) {
      const std::vector<float> x = random_values(g.n * g.h * g.w * g.c, 1), w = random_values(g.k * g.k * g.c * g.o, 2);
      const std::vector<float> b = random_values(g.o, 3);
      const Tensor tx = ag::constant(x, {g.n, g.h, g.w, g.c}), tw = ag::constant(w, {g.k, g.k, g.c, g.o});
      const Tensor tb = ag::constant(b, {g.o});
      const int ts = static_cast<int>(g.stride);
      auto f = ag::function(conv_layer);
      const auto t0 = std::chrono::steady_clock::now();
      const Tensor ours = f(tx, tw, tb, ts);
      const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      RowMatrix patches;
      const std::vector<float> theirs = conv_by_hand(g, x, w, b, patches);
      const std::vector<float> got = ours.to_vector<float>();
      float max_diff = 0;
      for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - theirs[k]));
      const double agc = agbench::time_per_call([&] { agbench::keep(f(tx, tw, tb, ts)); });
      const double flops = 2.0 * static_cast<double>(ours.num_elements()) * static_cast<double>(g.k * g.k * g.c);
      std::string note = fmt::format("{:.1f} GFLOP/s; first call {}; within {:.1e} of im2col", flops / agc * 1e-9,
                                     agbench::ms(first), max_diff);
      const std::string row = fmt::format("{} ({} thread{})", name, threads, threads > 1 ? "s" : "");
      std::vector<float> torch_out;
      const std::optional<double> torch =
          torch_baseline::conv_layer_seconds({g.n, g.h, g.w, g.c, g.k, g.o, g.stride}, x, w, b, threads, &torch_out);
      if (torch) {
        if (g.stride == 1) {
          float torch_diff = 0;
          for (size_t k = 0; k < got.size(); ++k) torch_diff = std::max(torch_diff, std::abs(got[k] - torch_out[k]));
          note += fmt::format(", {:.1e} of libtorch", torch_diff);
        }
        if (threads == 1) {
          const double eigen = agbench::time_per_call([&] { agbench::keep(conv_by_hand(g, x, w, b, patches)); });
          note += fmt::format("; im2col+Eigen {} ({:.2f}x)", agbench::us(eigen), agc / eigen);
        }
        rows.push_back(
            {row, agbench::us(agc), agbench::us(*torch) + " libtorch", fmt::format("{:.2f}x", agc / *torch), note});
      } else if (threads == 1) {  // no libtorch-dev: im2col + Eigen is the baseline
        const double eigen = agbench::time_per_call([&] { agbench::keep(conv_by_hand(g, x, w, b, patches)); });
        rows.push_back({row, agbench::us(agc), agbench::us(eigen) + " im2col+Eigen",
                        fmt::format("{:.2f}x", agc / eigen), note + "; libtorch-dev not installed"});
      }
    }
  }
  ag::set_num_threads(1);
  {  // LeNet's forward pass on a batch of 32 (agc only: the layers above carry the comparison).
    const Tensor x = ag::constant(random_values(32 * 28 * 28, 4), {32, 28, 28, 1});
    const Tensor w1 = ag::constant(random_values(5 * 5 * 6, 5), {5, 5, 1, 6});
    const Tensor w2 = ag::constant(random_values(5 * 5 * 6 * 16, 6), {5, 5, 6, 16});
    const Tensor dense = ag::constant(random_values(256 * 10, 7), {256, 10});
    auto f = ag::function(lenet);
    const auto t0 = std::chrono::steady_clock::now();
    agbench::keep(f(x, w1, w2, dense));
    const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double agc = agbench::time_per_call([&] { agbench::keep(f(x, w1, w2, dense)); });
    rows.push_back({"LeNet forward, batch 32", agbench::us(agc), "", "", "first call " + agbench::ms(first)});
  }
  agbench::print_table("Convolution layers (conv2d + bias + relu, NHWC, float32)", rows);
  return 0;
}
