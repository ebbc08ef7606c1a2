// ag::nn's convolutions and pooling, eagerly: values against the definitions written out here
// (TensorFlow's SAME/VALID arithmetic, independent of agc's), float32 (oneDNN) against float64
// (agc's loops), conv2d_transpose as conv2d's adjoint, and the errors.
#include <gtest/gtest.h>
#include <ag/ag.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ag/detail/runtime_kernels.h"

#include "../common/expect_error.h"
#include "ag/detail/log.h"
#include "../common/random_values.h"

namespace {

using ag::Tensor;

using agtest::expect_error;

struct Case {
  ag::Shape x, w;
  int64_t sh, sw, dh, dw;
  const char* padding;
};

// The padding before an axis and its output size, as tf.nn documents them.
std::pair<int64_t, int64_t> pad_and_out(int64_t in, int64_t k, int64_t s, int64_t d, bool same) {
  const int64_t span = (k - 1) * d + 1;
  if (!same) return {0, (in - span) / s + 1};
  const int64_t out = (in + s - 1) / s;
  return {std::max<int64_t>((out - 1) * s + span - in, 0) / 2, out};
}

// y[n, i, j, o] = sum over (a, b, c) of x[n, i*sh - pad + a*dh, j*sw - pad + b*dw, c] * w[a, b, c, o].
std::vector<double> conv_by_definition(const Case& c, const std::vector<double>& x, const std::vector<double>& w,
                                       ag::Shape& out_shape) {
  const bool same = std::string(c.padding) == "SAME";
  const auto [ph, oh] = pad_and_out(c.x[1], c.w[0], c.sh, c.dh, same);
  const auto [pw, ow] = pad_and_out(c.x[2], c.w[1], c.sw, c.dw, same);
  const int64_t N = c.x[0], H = c.x[1], W = c.x[2], C = c.x[3], O = c.w[3];
  out_shape = ag::Shape{N, oh, ow, O};
  std::vector<double> y(static_cast<size_t>(N * oh * ow * O));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t o = 0; o < O; ++o) {
          double sum = 0;
          for (int64_t a = 0; a < c.w[0]; ++a)
            for (int64_t b = 0; b < c.w[1]; ++b)
              for (int64_t ch = 0; ch < C; ++ch) {
                const int64_t r = i * c.sh - ph + a * c.dh, q = j * c.sw - pw + b * c.dw;
                if (r < 0 || r >= H || q < 0 || q >= W) continue;
                sum += x[static_cast<size_t>(((n * H + r) * W + q) * C + ch)] * w[static_cast<size_t>(((a * c.w[1] + b) * C + ch) * O + o)];
              }
          y[static_cast<size_t>(((n * oh + i) * ow + j) * O + o)] = sum;
        }
  return y;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {{2, 5, 6, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, "VALID"}, {{2, 5, 6, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, "SAME"},
      {{1, 7, 8, 2}, {3, 2, 2, 5}, 2, 3, 1, 1, "SAME"},  {{1, 7, 8, 2}, {3, 2, 2, 5}, 2, 2, 1, 1, "VALID"},
      {{2, 9, 9, 3}, {3, 3, 3, 2}, 1, 1, 2, 2, "SAME"},  {{2, 9, 10, 1}, {2, 3, 1, 6}, 1, 2, 3, 2, "VALID"},
      {{3, 4, 4, 8}, {1, 1, 8, 8}, 1, 1, 1, 1, "SAME"},  {{1, 6, 5, 4}, {4, 4, 4, 3}, 3, 2, 1, 1, "SAME"},
  };
  return c;
}

std::string name(const Case& c) {
  return fmt::format("x {} w {} strides {}x{} dilations {}x{} {}", c.x.str(), c.w.str(), c.sh, c.sw, c.dh, c.dw, c.padding);
}

TEST(WindowOps, Conv2dMatchesTheDefinitionInBothDtypes) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(name(c));
    const Tensor x = agtest::random_values(c.x, 1), w = agtest::random_values(c.w, 2);
    ag::Shape want_shape;
    const std::vector<double> want = conv_by_definition(c, x.to_vector<double>(), w.to_vector<double>(), want_shape);
    const Tensor y64 = ag::nn::conv2d(x, w, {c.sh, c.sw}, c.padding, {c.dh, c.dw});
    ASSERT_EQ(y64.shape(), want_shape);
    const std::vector<double> got64 = y64.to_vector<double>();
    for (size_t k = 0; k < want.size(); ++k) ASSERT_NEAR(got64[k], want[k], 1e-12) << k;
    const uint64_t before = ag::detail::onednn_conv_calls();
    const Tensor y32 = ag::nn::conv2d(ag::cast(x, ag::float32), ag::cast(w, ag::float32), {c.sh, c.sw}, c.padding, {c.dh, c.dw});
    EXPECT_EQ(ag::detail::onednn_conv_calls(), before + 1) << "float32 convolutions run on oneDNN";
    ASSERT_EQ(y32.shape(), want_shape);
    const std::vector<float> got32 = y32.to_vector<float>();
    for (size_t k = 0; k < want.size(); ++k) ASSERT_NEAR(got32[k], want[k], 1e-5) << k;
  }
}

// <conv2d(x, w), y> == <x, conv2d_transpose(y, w)>: the transpose is the adjoint, in both dtypes.
TEST(WindowOps, Conv2dTransposeIsTheAdjointOfConv2d) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(name(c));
    for (ag::DType d : {ag::float64, ag::float32}) {
      const Tensor x = ag::cast(agtest::random_values(c.x, 3), d), w = ag::cast(agtest::random_values(c.w, 4), d);
      const Tensor y = ag::nn::conv2d(x, w, {c.sh, c.sw}, c.padding, {c.dh, c.dw});
      const Tensor v = ag::cast(agtest::random_values(y.shape(), 5), d);
      const Tensor xt = ag::nn::conv2d_transpose(v, w, c.x, {c.sh, c.sw}, c.padding, {c.dh, c.dw});
      ASSERT_EQ(xt.shape(), c.x);
      const double lhs = ag::reduce_sum(ag::cast(y * v, ag::float64)).item<double>();
      const double rhs = ag::reduce_sum(ag::cast(x * xt, ag::float64)).item<double>();
      EXPECT_NEAR(lhs, rhs, d == ag::float64 ? 1e-10 : 1e-4 * std::max(1.0, std::abs(lhs)));
    }
  }
}

TEST(WindowOps, Conv1dIsAConv2dOfHeightOne) {
  const Tensor x = agtest::random_values({2, 9, 3}, 6), w = agtest::random_values({3, 3, 4}, 7);
  for (const char* padding : {"SAME", "VALID"}) {
    const Tensor y = ag::nn::conv1d(x, w, 2, padding, 1);
    const Tensor want = ag::squeeze(ag::nn::conv2d(ag::expand_dims(x, 1), ag::expand_dims(w, 0), {1, 2}, padding), {1});
    EXPECT_EQ(y.shape(), want.shape());
    EXPECT_EQ(y.to_vector<double>(), want.to_vector<double>());
  }
  EXPECT_EQ(ag::nn::conv1d(x, w, 1, "VALID", 2).shape(), (ag::Shape{2, 5, 4}));
}

// Pools by definition: padding is never in a window; the average divides by what it covers.
TEST(WindowOps, PoolsMatchTheDefinition) {
  const Tensor x = agtest::random_values({2, 5, 7, 3}, 8);
  const std::vector<double> xv = x.to_vector<double>();
  for (const char* padding : {"VALID", "SAME"})
    for (const auto& [k, s] : std::vector<std::pair<ag::nn::Size2D, ag::nn::Size2D>>{{2, 2}, {{3, 2}, {1, 2}}, {3, 3}}) {
      SCOPED_TRACE(fmt::format("{} ksize {}x{} strides {}x{}", padding, k.h, k.w, s.h, s.w));
      const bool same = std::string(padding) == "SAME";
      const auto [ph, oh] = pad_and_out(5, k.h, s.h, 1, same);
      const auto [pw, ow] = pad_and_out(7, k.w, s.w, 1, same);
      for (ag::DType d : {ag::float64, ag::float32}) {
        const Tensor mx = ag::nn::max_pool2d(ag::cast(x, d), k, s, padding), av = ag::nn::avg_pool2d(ag::cast(x, d), k, s, padding);
        ASSERT_EQ(mx.shape(), (ag::Shape{2, oh, ow, 3}));
        const std::vector<double> m = mx.to_vector<double>(), a = av.to_vector<double>();
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
              for (int64_t c = 0; c < 3; ++c) {
                double best = -INFINITY, sum = 0;
                int count = 0;
                for (int64_t r = i * s.h - ph; r < i * s.h - ph + k.h; ++r)
                  for (int64_t q = j * s.w - pw; q < j * s.w - pw + k.w; ++q) {
                    if (r < 0 || r >= 5 || q < 0 || q >= 7) continue;
                    const double v = ag::cast(ag::cast(ag::constant(xv[static_cast<size_t>(((n * 5 + r) * 7 + q) * 3 + c)]), d), ag::float64).item<double>();
                    best = std::max(best, v);
                    sum += v;
                    ++count;
                  }
                const size_t at = static_cast<size_t>(((n * oh + i) * ow + j) * 3 + c);
                ASSERT_EQ(m[at], best);
                ASSERT_NEAR(a[at], sum / count, 1e-6);
              }
      }
    }
}

// oneDNN picks its kernel for the CPU, capped by ONEDNN_MAX_CPU_ISA: ctest runs this file again
// with AVX2 and SSE4.1 caps (tests/runtime/CMakeLists.txt), and this checks the cap took.
TEST(WindowOps, OneDnnKernelFollowsTheCpuCap) {
  std::string log;
  ag::detail::set_log_topics(static_cast<unsigned>(ag::detail::LogTopic::Kernels));
  ag::set_log_sink([&](std::string_view line) { log += std::string(line); });
  // A geometry no other test uses: its primitive is made (and logged) here.
  ag::nn::conv2d(ag::ones({1, 11, 13, 3}, ag::float32), ag::ones({2, 3, 3, 7}, ag::float32), 1, "SAME");
  ag::set_log_sink(nullptr);
  ag::detail::set_log_topics(0);
  ASSERT_NE(log.find("Conv2D 1x11x13x3 * 2x3x3x7: oneDNN "), std::string::npos) << log;
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string kernel = log.substr(log.find("oneDNN "));
  if (cap && std::string(cap) == "AVX2") EXPECT_EQ(kernel.find("avx512"), std::string::npos) << kernel;
  if (cap && std::string(cap) == "SSE41") EXPECT_EQ(kernel.find("avx"), std::string::npos) << kernel;
}

// oneDNN splits a primitive's work for the OpenMP thread count it was made under: a primitive per
// thread count, made when ag::set_num_threads changes it (the same values whatever the count).
TEST(WindowOps, OneDnnPrimitivesFollowTheThreadCount) {
  std::string log;
  ag::detail::set_log_topics(static_cast<unsigned>(ag::detail::LogTopic::Kernels));
  ag::set_log_sink([&](std::string_view line) { log += std::string(line) + "\n"; });
  const Tensor x = ag::cast(agtest::random_values({2, 9, 7, 5}, 3), ag::float32);
  const Tensor w = ag::cast(agtest::random_values({3, 3, 5, 4}, 4), ag::float32);
  const int before = ag::get_num_threads();
  ag::set_num_threads(1);
  const Tensor one = ag::nn::conv2d(x, w, 1, "SAME");
  ag::set_num_threads(2);
  const Tensor two = ag::nn::conv2d(x, w, 1, "SAME");
  ag::set_num_threads(before);
  ag::set_log_sink(nullptr);
  ag::detail::set_log_topics(0);
  EXPECT_NE(log.find("Conv2D 2x9x7x5 * 3x3x5x4: oneDNN "), std::string::npos) << log;
  EXPECT_NE(log.find(", 1 thread\n"), std::string::npos) << log;
  EXPECT_NE(log.find(", 2 threads\n"), std::string::npos) << log;
  EXPECT_EQ(one.to_vector<float>(), two.to_vector<float>());
}

TEST(WindowOps, EmptyBatchGivesAnEmptyResult) {
  const Tensor x = ag::zeros({0, 4, 4, 2}, ag::float32), w = ag::ones({3, 3, 2, 5}, ag::float32);
  EXPECT_EQ(ag::nn::conv2d(x, w, 1, "SAME").shape(), (ag::Shape{0, 4, 4, 5}));
  EXPECT_EQ(ag::nn::max_pool2d(x, 2, 2, "VALID").shape(), (ag::Shape{0, 2, 2, 2}));
}

TEST(WindowOps, BadArgumentsAreClearErrors) {
  const Tensor x = ag::ones({1, 5, 5, 3}, ag::float32), w = ag::ones({3, 3, 4, 2}, ag::float32);
  expect_error<ag::ValueError>([&] { ag::nn::conv2d(x, w, 1, "SAME"); },
                                       {"ag::nn::conv2d", "input channels of the input and the filter differ: 3 vs 4",
                                        "window_ops_test.cpp:"});
  expect_error<ag::ValueError>([&] { ag::nn::conv2d(x, ag::ones({3, 3, 3, 2}, ag::float32), 1, "same"); },
                                       {"padding must be \"SAME\" or \"VALID\", got \"same\""});
  expect_error<ag::ValueError>([&] { ag::nn::conv2d(x, ag::ones({7, 3, 3, 2}, ag::float32), 1, "VALID"); },
                                       {"a 7x3 window", "does not fit the input's 5x5 with VALID padding"});
  expect_error<ag::ValueError>([&] { ag::nn::conv2d(x, ag::ones({3, 3, 3, 2}, ag::float32), 0, "VALID"); },
                                       {"strides and dilations must be positive"});
  expect_error<ag::ValueError>([&] { ag::nn::conv2d(ag::ones({5, 5, 3}, ag::float32), w, 1, "VALID"); },
                                       {"the input must have rank 4, got [5,5,3]"});
  expect_error<ag::TypeError>([&] { ag::nn::max_pool2d(ag::ones({1, 4, 4, 1}, ag::int32), 2, 2, "VALID"); },
                                      {"ag::nn::max_pool2d", "needs floating-point tensors, got int32[1,4,4,1]"});
  expect_error<ag::TypeError>([&] { ag::nn::conv2d(x, ag::ones({3, 3, 3, 2}, ag::float64), 1, "VALID"); },
                                      {"different dtypes"});
  // conv2d over output_shape must give conv2d_transpose's input.
  expect_error<ag::ValueError>(
      [&] { ag::nn::conv2d_transpose(ag::ones({1, 3, 3, 2}, ag::float32), ag::ones({3, 3, 4, 2}, ag::float32), {1, 8, 8, 4}, 1, "SAME"); },
      {"ag::nn::conv2d_transpose", "the input is [1,3,3,2], but a window over [1,8,8,4] gives 8x8 outputs"});
}

}  // namespace
