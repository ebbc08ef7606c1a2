// Large tensors (16M elements, beyond the caching allocator's threshold and every cache)
// against plain loops.
#include <cmath>

#include "test_util.h"

namespace {

constexpr int64_t kN = int64_t{1} << 24;

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000) * scale - 3.f;
  return v;
}

TEST(Large, BinaryOpsOn16MFloats) {
  const auto a = ramp(kN, 0.5f), b = ramp(kN, -0.25f);
  const ag::Tensor x = agtest::make(a, {kN}), y = agtest::make(b, {kN});
  const ag::Tensor s = x + y, p = x * y, chain = (x + y) * x - y;
  const float* ps = s.data<float>();
  const float* pp = p.data<float>();
  const float* pc = chain.data<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < kN; ++i) {
    bad += ps[i] != a[i] + b[i];
    bad += pp[i] != a[i] * b[i];
    // One operation per statement: no FMA contraction, the same rounding as three ops.
    const float t = a[i] + b[i];
    const float u = t * a[i];
    bad += pc[i] != u - b[i];
  }
  EXPECT_EQ(bad, 0);
}

TEST(Large, BroadcastRowAndColumnOver4096Squared) {
  const int64_t n = 4096;
  const auto m = ramp(n * n, 0.125f), row = ramp(n, 1.f);
  const ag::Tensor x = agtest::make(m, {n, n});
  const ag::Tensor r = agtest::make(row, {n});
  const ag::Tensor c = agtest::make(row, {n, 1});
  const ag::Tensor dr = x - r, dc = x * c;  // held: data() does not keep a temporary alive
  const float* pr = dr.data<float>();
  const float* pc = dc.data<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bad += pr[i * n + j] != m[i * n + j] - row[j];
      bad += pc[i * n + j] != m[i * n + j] * row[i];
    }
  EXPECT_EQ(bad, 0);
}

TEST(Large, ReductionsOn16MElements) {
  // Integer-valued data: the sums are exact in float64 and int64.
  std::vector<int64_t> v(static_cast<size_t>(kN));
  int64_t sum = 0, mx = INT64_MIN;
  for (int64_t i = 0; i < kN; ++i) {
    v[i] = (i * 7919) % 10007 - 5000;
    sum += v[i];
    mx = std::max(mx, v[i]);
  }
  const ag::Tensor t = agtest::make(v, {kN});
  EXPECT_EQ(ag::reduce_sum(t).item<int64_t>(), sum);
  EXPECT_EQ(ag::reduce_max(t).item<int64_t>(), mx);
  const ag::Tensor d = ag::cast(t, ag::float64);
  EXPECT_EQ(ag::reduce_sum(d).item<double>(), static_cast<double>(sum));
  // Per-row sums of a [4096, 4096] view, across both axes.
  const ag::Tensor m = ag::reshape(t, {4096, 4096});
  const auto rows = ag::reduce_sum(m, 1).to_vector<int64_t>();
  const auto cols = ag::reduce_sum(m, 0).to_vector<int64_t>();
  std::vector<int64_t> er(4096, 0), ec(4096, 0);
  for (int64_t i = 0; i < 4096; ++i)
    for (int64_t j = 0; j < 4096; ++j) {
      er[i] += v[i * 4096 + j];
      ec[j] += v[i * 4096 + j];
    }
  EXPECT_EQ(rows, er);
  EXPECT_EQ(cols, ec);
  const ag::Tensor f = ag::cast(t, ag::float32);
  EXPECT_NEAR(ag::reduce_mean(f).item<double>(), static_cast<double>(sum) / kN, 1e-2);
}

TEST(Large, MatmulAgainstATripleLoop) {
  const int64_t m = 200, k = 300, n = 150;
  const auto a = agtest::sample<double>(m * k, 91), b = agtest::sample<double>(k * n, 92);
  const ag::Tensor c = ag::matmul(agtest::make(a, {m, k}), agtest::make(b, {k, n}));
  const double* pc = c.data<double>();
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      worst = std::max(worst, std::abs(s - pc[i * n + j]));
    }
  EXPECT_LT(worst, 1e-9);
}

TEST(Large, TransposeAndCastOf16M) {
  const int64_t n = 4096;
  std::vector<int32_t> v(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n * n; ++i) v[i] = static_cast<int32_t>(i);
  const ag::Tensor t = ag::transpose(agtest::make(v, {n, n}));
  const int32_t* p = t.data<int32_t>();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) bad += p[i * n + j] != v[j * n + i];
  EXPECT_EQ(bad, 0);
  const ag::Tensor f = ag::cast(t, ag::float32);
  EXPECT_EQ(f.data<float>()[n * n - 1], static_cast<float>(n * n - 1));
}

}  // namespace
