// ag::nn and the array functions written in ops (reduce_logsumexp, clip_by_value, broadcast_to,
// one_hot, linspace): eager values against plain C++ loops in long double, at the extremes
// (logits of ±1000, -inf rows), and their argument errors, which name the caller's line.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include "../common/error_message.h"

#include <cmath>
#include <string>
#include <vector>

namespace {

using ag::Tensor;

std::vector<double> values(const Tensor& t) { return ag::cast(t, ag::float64).to_vector<double>(); }

void expect_near_all(const std::vector<double>& got, const std::vector<long double>& want, double rtol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]) || std::isnan(want[i])) {
      EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << what << " element " << i;
      if (std::isinf(want[i])) EXPECT_EQ(got[i], static_cast<double>(want[i])) << what << " element " << i;
      continue;
    }
    EXPECT_NEAR(got[i], static_cast<double>(want[i]), rtol * std::max(1.0L, std::fabs(want[i]))) << what << " element " << i;
  }
}

// Rows of `cols` logits, with extremes: a row of ±1000 (exp overflows without the max shift).
const std::vector<double> kLogits = {1, 2, 3, 4, -1000, 0, 1000, 999, 0.5, 0.5, 0.5, 0.5};
constexpr int kRows = 3, kCols = 4;

std::vector<long double> softmax_ref(const std::vector<double>& x, bool log_form) {
  std::vector<long double> out(x.size());
  for (int r = 0; r < kRows; ++r) {
    long double m = -INFINITY, s = 0;
    for (int c = 0; c < kCols; ++c) m = std::max<long double>(m, x[r * kCols + c]);
    for (int c = 0; c < kCols; ++c) s += std::exp(static_cast<long double>(x[r * kCols + c]) - m);
    for (int c = 0; c < kCols; ++c) {
      const long double z = x[r * kCols + c] - m;
      out[r * kCols + c] = log_form ? z - std::log(s) : std::exp(z) / s;
    }
  }
  return out;
}

TEST(NnOps, SoftmaxAndLogSoftmaxAtExtremes) {
  for (ag::DType d : {ag::float32, ag::float64}) {
    const Tensor x = ag::cast(ag::constant(kLogits, {kRows, kCols}), d);
    const double tol = d == ag::float32 ? 1e-6 : 1e-13;
    expect_near_all(values(ag::nn::softmax(x)), softmax_ref(kLogits, false), tol, "softmax");
    expect_near_all(values(ag::nn::log_softmax(x)), softmax_ref(kLogits, true), tol, "log_softmax");
    // Along axis 0: the transpose's softmax along its last axis.
    const Tensor xt = ag::transpose(x);
    expect_near_all(values(ag::transpose(ag::nn::softmax(xt, 0))), softmax_ref(kLogits, false), tol, "softmax axis 0");
  }
}

TEST(NnOps, ReduceLogSumExp) {
  const Tensor x = ag::constant(std::vector<double>{1, 2, 3, -INFINITY, -INFINITY, -INFINITY, 1000, 1000, -5}, {3, 3});
  const std::vector<double> got = values(ag::reduce_logsumexp(x, 1));
  const std::vector<long double> want = {3 + std::log(1 + std::exp(-1.0L) + std::exp(-2.0L)), -INFINITY,
                                         1000 + std::log(2 + std::exp(-1005.0L))};
  expect_near_all(got, want, 1e-14, "reduce_logsumexp rows");
  EXPECT_EQ(ag::reduce_logsumexp(x, 1, true).shape(), (ag::Shape{3, 1}));
  const Tensor all = ag::reduce_logsumexp(ag::constant(std::vector<float>{0, 0, 0, 0}, {2, 2}));
  EXPECT_EQ(all.shape(), ag::Shape{});
  EXPECT_NEAR(all.item<double>(), std::log(4.0), 1e-6);
}

TEST(NnOps, GeluExactAndTanh) {
  const std::vector<double> xs = {-6, -2, -0.5, 0, 0.3, 1, 3, 8};
  const Tensor x = ag::constant(xs, {8});
  std::vector<long double> exact, approx;
  for (double v : xs) {
    const long double a = v;
    exact.push_back(a / 2 * (1 + std::erf(a / std::sqrt(2.0L))));
    approx.push_back(a / 2 * (1 + std::tanh(std::sqrt(2 / M_PIl) * (a + 0.044715L * a * a * a))));
  }
  expect_near_all(values(ag::nn::gelu(x)), exact, 1e-14, "gelu");
  expect_near_all(values(ag::nn::gelu(x, /*approximate=*/true)), approx, 1e-14, "gelu tanh");
}

TEST(NnOps, BiasAddMomentsL2Normalize) {
  const Tensor v = ag::constant(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(ag::nn::bias_add(v, ag::constant(std::vector<double>{10, 20, 30}))),
            (std::vector<double>{11, 22, 33, 14, 25, 36}));
  auto [mean, variance] = ag::nn::moments(v, {0});
  EXPECT_EQ(values(mean), (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(values(variance), (std::vector<double>{2.25, 2.25, 2.25}));
  auto [m_all, v_all] = ag::nn::moments(v, {0, 1}, /*keepdims=*/true);
  EXPECT_EQ(m_all.shape(), (ag::Shape{1, 1}));
  EXPECT_NEAR(v_all.item<double>(), 35.0 / 12.0, 1e-14);
  const std::vector<double> n = values(ag::nn::l2_normalize(v, 1));
  const double r0 = std::sqrt(14.0), r1 = std::sqrt(77.0);
  expect_near_all(n, {1 / r0, 2 / r0, 3 / r0, 4 / r1, 5 / r1, 6 / r1}, 1e-15, "l2_normalize");
  // A zero vector stays zero (epsilon), not NaN.
  EXPECT_EQ(values(ag::nn::l2_normalize(ag::zeros({3}, ag::float64))), (std::vector<double>{0, 0, 0}));
}

TEST(NnOps, CrossEntropies) {
  const Tensor logits = ag::constant(kLogits, {kRows, kCols});
  const std::vector<long double> ls = softmax_ref(kLogits, true);
  const Tensor labels = ag::constant(std::vector<int64_t>{2, 0, 3});
  std::vector<long double> want_sparse = {-ls[0 * kCols + 2], -ls[1 * kCols + 0], -ls[2 * kCols + 3]};
  expect_near_all(values(ag::nn::sparse_softmax_cross_entropy_with_logits(labels, logits)), want_sparse, 1e-13, "sparse");
  // Dense labels: a distribution per row.
  const std::vector<double> dist = {0.25, 0.25, 0.5, 0, 1, 0, 0, 0, 0.1, 0.2, 0.3, 0.4};
  std::vector<long double> want_dense(kRows, 0);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) want_dense[r] -= dist[r * kCols + c] * ls[r * kCols + c];
  expect_near_all(values(ag::nn::softmax_cross_entropy_with_logits(ag::constant(dist, {kRows, kCols}), logits)),
                  want_dense, 1e-13, "dense");
  // Logistic loss at ±1000: finite.
  const std::vector<double> x = {-1000, -3, 0, 2, 1000}, z = {1, 0, 0.5, 1, 0};
  std::vector<long double> want;
  for (size_t i = 0; i < x.size(); ++i)
    want.push_back(std::max(x[i], 0.0) - x[i] * z[i] + std::log1p(std::exp(-std::fabs(static_cast<long double>(x[i])))));
  expect_near_all(values(ag::nn::sigmoid_cross_entropy_with_logits(ag::constant(z), ag::constant(x))), want, 1e-14,
                  "sigmoid");
}

TEST(NnOps, ArrayFunctions) {
  EXPECT_EQ(values(ag::clip_by_value(ag::constant(std::vector<double>{-2, 0.5, 7}), 0.0, 1.0)),
            (std::vector<double>{0, 0.5, 1}));
  const Tensor b = ag::broadcast_to(ag::constant(std::vector<int32_t>{1, 2, 3}), {2, 3});
  EXPECT_EQ(b.dtype(), ag::int32);
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
  // An index out of range gives a row of off values (TensorFlow's one_hot).
  const Tensor h = ag::one_hot(ag::constant(std::vector<int32_t>{0, 2, 5, -1}), 3, 1.0, -1.0, ag::float64);
  EXPECT_EQ(h.shape(), (ag::Shape{4, 3}));
  EXPECT_EQ(values(h), (std::vector<double>{1, -1, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1}));
  const Tensor l = ag::linspace(0.0, 1.0, 5);
  EXPECT_EQ(l.dtype(), ag::float32);
  EXPECT_EQ(values(l), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(values(ag::linspace(ag::constant(2.0), ag::constant(3.0), 1)), (std::vector<double>{2}));
  // The last value is stop exactly.
  EXPECT_EQ(values(ag::linspace(0.1, 0.7, 7, ag::float64)).back(), 0.7);
}

// NumPy's np.pad, np.tile, np.roll, np.meshgrid and np.linalg.norm on small cases.
TEST(NnOps, PadTileMeshgridNorm) {
  const Tensor x = ag::constant(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(ag::pad(x, {{1, 0}, {0, 2}}, ag::PadMode::constant, -1)),
            (std::vector<double>{-1, -1, -1, -1, -1, 1, 2, 3, -1, -1, 4, 5, 6, -1, -1}));
  EXPECT_EQ(values(ag::pad(ag::constant(std::vector<double>{1, 2, 3}), {{2, 2}}, ag::PadMode::reflect)),
            (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(values(ag::pad(ag::constant(std::vector<double>{1, 2, 3}), {{2, 1}}, ag::PadMode::symmetric)),
            (std::vector<double>{2, 1, 1, 2, 3, 3}));
  EXPECT_EQ(ag::pad(x, {{0, 0}, {1, 1}}, ag::PadMode::reflect).shape(), (ag::Shape{2, 5}));
  EXPECT_EQ(values(ag::tile(x, {2, 1})), (std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values(ag::tile(ag::constant(std::vector<double>{1, 2}), {3})), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  const std::vector<Tensor> g = ag::meshgrid({ag::constant(std::vector<double>{1, 2, 3}), ag::constant(std::vector<double>{7, 8})});
  EXPECT_EQ(g[0].shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values(g[0]), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(values(g[1]), (std::vector<double>{7, 7, 7, 8, 8, 8}));
  const std::vector<Tensor> ij = ag::meshgrid({ag::constant(std::vector<double>{1, 2, 3}), ag::constant(std::vector<double>{7, 8})},
                                              ag::MeshIndexing::ij);
  EXPECT_EQ(ij[0].shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(values(ij[1]), (std::vector<double>{7, 8, 7, 8, 7, 8}));
  EXPECT_NEAR(ag::norm(x).item<double>(), std::sqrt(91.0), 1e-14);
  EXPECT_EQ(values(ag::norm(x - 3.5, 1, 1)), (std::vector<double>{4.5, 4.5}));
  EXPECT_EQ(values(ag::norm(x, INFINITY, 0, true)), (std::vector<double>{4, 5, 6}));
  EXPECT_THROW(ag::pad(x, {{0, 0}, {3, 0}}, ag::PadMode::reflect), ag::ValueError);
  EXPECT_THROW(ag::tile(x, {2}), ag::ValueError);
  // np.roll: by 1, by -1 (the other way), by more than the dim, along both axes.
  const Tensor v = ag::constant(std::vector<double>{1, 2, 3, 4, 5});
  EXPECT_EQ(values(ag::roll(v, 1, 0)), (std::vector<double>{5, 1, 2, 3, 4}));
  EXPECT_EQ(values(ag::roll(v, -1, 0)), (std::vector<double>{2, 3, 4, 5, 1}));
  EXPECT_EQ(values(ag::roll(v, 7, -1)), (std::vector<double>{4, 5, 1, 2, 3}));
  EXPECT_EQ(values(ag::roll(v, 5, 0)), values(v));
  EXPECT_EQ(values(ag::roll(x, {1, -1}, {0, 1})), (std::vector<double>{5, 6, 4, 2, 3, 1}));
  EXPECT_THROW(ag::roll(x, 1, 2), ag::ValueError);
  EXPECT_THROW(ag::roll(x, {1}, {0, 1}), ag::ValueError);
  EXPECT_THROW(ag::norm(x, 3), ag::ValueError);
  // gather_nd: whole elements (k = rank) and rows (k < rank), TensorFlow's examples.
  const Tensor pairs = ag::constant(std::vector<int32_t>{1, 2, 0, 0, 1, 0}, {3, 2});
  EXPECT_EQ(values(ag::gather_nd(x, pairs)), (std::vector<double>{6, 1, 4}));
  EXPECT_EQ(values(ag::gather_nd(x, ag::constant(std::vector<int64_t>{1, 0}, {2, 1}))),
            (std::vector<double>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(ag::gather_nd(x, ag::constant(std::vector<int64_t>{1, 0}, {2, 1})).shape(), (ag::Shape{2, 3}));
  // (0, 3) is linear index 3, in range for the flat params, but out of range for dim 1.
  const std::string m = agtest::error_message([&] { ag::gather_nd(x, ag::constant(std::vector<int32_t>{0, 3}, {1, 2})); });
  EXPECT_NE(m.find("every index must be in [0, dim)"), std::string::npos) << m;
}

TEST(NnOps, MathOpsAgreeWithLibm) {
  const std::vector<double> xs = {-0.9, -0.3, 0, 0.2, 0.7};
  const Tensor x = ag::constant(xs);
  auto check = [&](const char* name, const Tensor& got, double (*f)(double)) {
    std::vector<long double> want;
    for (double v : xs) want.push_back(f(v));
    expect_near_all(values(got), want, 0, name);  // the same libm function: bit for bit
  };
  check("erfc", ag::erfc(x), std::erfc);
  check("log1p", ag::log1p(x), std::log1p);
  check("expm1", ag::expm1(x), std::expm1);
  check("tan", ag::tan(x), std::tan);
  check("atan", ag::atan(x), std::atan);
  check("asin", ag::asin(x), std::asin);
  check("acos", ag::acos(x), std::acos);
  check("sinh", ag::sinh(x), std::sinh);
  check("cosh", ag::cosh(x), std::cosh);
  check("asinh", ag::asinh(x), std::asinh);
  check("atanh", ag::atanh(x), std::atanh);
  EXPECT_EQ(values(ag::acosh(x + 2)), (std::vector<double>{std::acosh(1.1), std::acosh(1.7), std::acosh(2.0),
                                                           std::acosh(2.2), std::acosh(2.7)}));
  EXPECT_EQ(values(ag::rsqrt(ag::constant(std::vector<double>{4, 0.25}))), (std::vector<double>{0.5, 2}));
  EXPECT_EQ(values(ag::atan2(ag::constant(std::vector<double>{1, -1, 0}), ag::constant(std::vector<double>{0, -1, -1}))),
            (std::vector<double>{std::atan2(1, 0), std::atan2(-1, -1), std::atan2(0, -1)}));
}

TEST(NnOps, ErrorsNameTheFunctionAndTheLine) {
  const Tensor logits = ag::constant(std::vector<float>{1, 2, 3, 4}, {2, 2});
  std::string m = agtest::error_message([&] { ag::nn::softmax(logits, 2); });
  EXPECT_NE(m.find("ag::nn::softmax: axis 2 is out of range for rank 2"), std::string::npos) << m;
  EXPECT_NE(m.find("nn_ops_test.cpp:"), std::string::npos) << m;
  m = agtest::error_message([&] { ag::nn::softmax(ag::constant(std::vector<int32_t>{1, 2})); });
  EXPECT_NE(m.find("must be a floating-point tensor, got int32"), std::string::npos) << m;
  m = agtest::error_message([&] { ag::nn::sparse_softmax_cross_entropy_with_logits(ag::constant(std::vector<int32_t>{0, 2}), logits); });
  EXPECT_NE(m.find("every label must be in [0, classes)"), std::string::npos) << m;
  EXPECT_THROW(ag::nn::sparse_softmax_cross_entropy_with_logits(ag::constant(std::vector<int32_t>{0, 2}), logits),
               ag::InvalidArgumentError);
  m = agtest::error_message([&] { ag::nn::bias_add(logits, ag::constant(std::vector<float>{1, 2, 3})); });
  EXPECT_NE(m.find("bias has 3 values and value has 2 channels"), std::string::npos) << m;
  m = agtest::error_message([&] { ag::broadcast_to(ag::constant(std::vector<float>{1, 2, 3}), {2, 2}); });
  EXPECT_NE(m.find("ag::broadcast_to: cannot broadcast a tensor of shape [3] to [2,2]"), std::string::npos) << m;
  EXPECT_THROW(ag::atan2(ag::constant(1), ag::constant(2)), ag::TypeError);
  EXPECT_THROW(ag::one_hot(ag::constant(std::vector<float>{1}), 3), ag::TypeError);
}

}  // namespace
