// Constructors: ag::constant (nested lists, vector + shape, ragged errors), zeros, ones, fill,
// zeros_like/ones_like, eye, range (dtype from the arguments), random_uniform, random_normal.
#include <cmath>
#include <set>

#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;

TEST(Constant, NestedListsGiveShapeAndDtype) {
  const ag::Tensor a = ag::constant({1, 2, 3});
  EXPECT_EQ(a.dtype(), ag::int32);
  EXPECT_EQ(agtest::dims(a), (Dims{3}));
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  const ag::Tensor b = ag::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(b.dtype(), ag::float32);
  EXPECT_EQ(agtest::dims(b), (Dims{2, 3}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const ag::Tensor c = ag::constant({{{1.0}, {2.0}}, {{3.0}, {4.0}}, {{5.0}, {6.0}}});
  EXPECT_EQ(c.dtype(), ag::float64);
  EXPECT_EQ(agtest::dims(c), (Dims{3, 2, 1}));
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  const ag::Tensor d = ag::constant({{{{true, false}}}, {{{false, true}}}});
  EXPECT_EQ(d.dtype(), ag::bool_);
  EXPECT_EQ(agtest::dims(d), (Dims{2, 1, 1, 2}));
  EXPECT_EQ(d.to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  const ag::Tensor e = ag::constant({int64_t{1} << 62, (int64_t{1} << 53) + 1});
  EXPECT_EQ(e.dtype(), ag::int64);
  EXPECT_EQ(e.to_vector<int64_t>(), (std::vector<int64_t>{int64_t{1} << 62, (int64_t{1} << 53) + 1}));
  const ag::Tensor s = ag::constant(5.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.item<float>(), 5.5f);
}

TEST(Constant, VectorAndShape) {
  const ag::Tensor a = ag::constant(std::vector<double>{1, 2, 3, 4, 5, 6}, ag::Shape{3, 2});
  EXPECT_EQ(agtest::dims(a), (Dims{3, 2}));
  EXPECT_EQ(a.dtype(), ag::float64);
  EXPECT_EQ(a[2].to_vector<double>(), (std::vector<double>{5, 6}));
  const ag::Tensor b = ag::constant(std::vector<int64_t>{7, 8});
  EXPECT_EQ(agtest::dims(b), (Dims{2}));
  EXPECT_EQ(b.dtype(), ag::int64);
  EXPECT_EQ(ag::constant(std::vector<float>{}, ag::Shape{2, 0}).num_elements(), 0);
  EXPECT_EQ(ag::constant(std::vector<int32_t>{9}, ag::Shape{}).item<int32_t>(), 9);
  const ag::Tensor f = ag::constant(std::vector<float>{0.1f, 1e30f, -0.f}, ag::Shape{3});
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0.1f, 1e30f, -0.f}));
  AG_EXPECT_ERROR(ag::ValueError, ag::constant(std::vector<float>{1, 2, 3}, ag::Shape{2, 2}), "ag::constant", "3",
                  "[2,2]");
}

TEST(Constant, RaggedListsAreValueErrors) {
  AG_EXPECT_ERROR(ag::ValueError, ag::constant({{1, 2}, {3}}), "ag::constant", "ragged");
  AG_EXPECT_ERROR(ag::ValueError, ag::constant({{1}, {2, 3}}), "ag::constant", "ragged");
  AG_EXPECT_ERROR(ag::ValueError, ag::constant({{{1, 2}}, {{3, 4}, {5, 6}}}), "ag::constant", "ragged");
  AG_EXPECT_ERROR(ag::ValueError, ag::constant({{{1.f, 2.f}, {3.f, 4.f}}, {{5.f, 6.f}, {7.f}}}), "ag::constant",
                  "ragged");
}

TEST(Fills, ZerosOnesFillAndLike) {
  const ag::Tensor z = ag::zeros({2, 3});
  EXPECT_EQ(z.dtype(), ag::float32);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(ag::ones({2}, ag::int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(ag::ones({3}, ag::bool_).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(ag::zeros({}, ag::float64).rank(), 0);
  EXPECT_EQ(ag::zeros({0, 5}).num_elements(), 0);
  const ag::Tensor f = ag::fill({2, 2}, 2.5f);
  EXPECT_EQ(f.dtype(), ag::float32);
  EXPECT_EQ(f.to_vector<float>(), std::vector<float>(4, 2.5f));
  const ag::Tensor g = ag::fill({3}, ag::Tensor(int64_t{1} << 60));
  EXPECT_EQ(g.dtype(), ag::int64);
  EXPECT_EQ(g.to_vector<int64_t>(), std::vector<int64_t>(3, int64_t{1} << 60));
  EXPECT_EQ(ag::fill({2}, true).to_vector<bool>(), (std::vector<bool>{true, true}));
  const ag::Tensor x = ag::constant({{1, 2, 3}});
  EXPECT_EQ(ag::zeros_like(x).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(ag::ones_like(x).shape(), x.shape());
  EXPECT_EQ(ag::ones_like(x).dtype(), ag::int32);
  EXPECT_EQ(ag::ones_like(ag::constant({0.5})).to_vector<double>(), (std::vector<double>{1.0}));
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({2, -1}), "ag::zeros", "[2,?]");
  AG_EXPECT_ERROR(ag::ValueError, ag::ones({-3}), "ag::ones");
  AG_EXPECT_ERROR(ag::ValueError, ag::fill({2}, ag::constant({1, 2})), "ag::fill", "scalar", "[2]");
}

TEST(Eye, IdentityOfEachDtype) {
  EXPECT_EQ(ag::eye(3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(ag::eye(2, ag::int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(ag::eye(2, ag::bool_).to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(ag::eye(1, ag::float64).to_vector<double>(), (std::vector<double>{1}));
  EXPECT_EQ(agtest::dims(ag::eye(0)), (Dims{0, 0}));
  AG_EXPECT_ERROR(ag::ValueError, ag::eye(-1), "ag::eye", "-1");
}

TEST(Range, DtypeComesFromTheArguments) {
  const ag::Tensor a = ag::range(5);
  EXPECT_EQ(a.dtype(), ag::int32);
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ag::range(int64_t{3}).dtype(), ag::int64);
  EXPECT_EQ(ag::range(2.0).dtype(), ag::float64);
  const ag::Tensor f = ag::range(0.f, 1.f, 0.25f);
  EXPECT_EQ(f.dtype(), ag::float32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  // Mixed C++ scalars promote like C++; a tensor argument decides for the weak scalars.
  const ag::Tensor m = ag::range(0, 1, 0.3);
  EXPECT_EQ(m.dtype(), ag::float64);
  agtest::expect_values(m, std::vector<double>{0, 0.3, 0.6, 0.9}, 1e-15, 1e-15);
  EXPECT_EQ(ag::range(ag::Tensor(int64_t{4})).dtype(), ag::int64);
  EXPECT_EQ(ag::range(1, ag::Tensor(2.5f)).to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  AG_EXPECT_ERROR(ag::TypeError, ag::range(ag::Tensor(5), 10, 0.5), "ag::range", "int32", "0.5");
}

TEST(Range, NegativeDeltaEmptyAndErrors) {
  EXPECT_EQ(ag::range(10, 0, -3).to_vector<int32_t>(), (std::vector<int32_t>{10, 7, 4, 1}));
  EXPECT_EQ(ag::range(1.0, -1.0, -0.5).to_vector<double>(), (std::vector<double>{1, 0.5, 0, -0.5}));
  EXPECT_EQ(ag::range(3, 0).num_elements(), 0);
  EXPECT_EQ(ag::range(0, 3, -1).num_elements(), 0);
  EXPECT_EQ(ag::range(0).num_elements(), 0);
  EXPECT_EQ(ag::range(-3).num_elements(), 0);
  EXPECT_EQ(ag::range(int64_t{-5}, int64_t{5}, int64_t{4}).to_vector<int64_t>(), (std::vector<int64_t>{-5, -1, 3}));
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::range(0, 10, 0), "ag::range", "delta");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::range(0.0, 1.0, 0.0), "ag::range", "delta");
  AG_EXPECT_ERROR(ag::TypeError, ag::range(true), "ag::range", "bool");
  AG_EXPECT_ERROR(ag::ValueError, ag::range(ag::constant({1, 2})), "ag::range", "scalar");
}

// ---- random ----

template <class T>
void moments(const ag::Tensor& t, double& mean, double& var) {
  const auto v = t.to_vector<double>();
  mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
}

TEST(Random, UniformIsDeterministicPerSeedAndInRange) {
  const ag::Tensor a = ag::random_uniform({1000}, ag::float32, -2, 3, 42);
  const ag::Tensor b = ag::random_uniform({1000}, ag::float32, -2, 3, 42);
  const ag::Tensor c = ag::random_uniform({1000}, ag::float32, -2, 3, 43);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  std::set<float> distinct;
  for (float v : a.to_vector<float>()) {
    EXPECT_GE(v, -2.f);
    EXPECT_LT(v, 3.f);
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 990u);
  // The same seed and shape give the same values in a float64 tensor (within float rounding).
  const auto d = ag::random_uniform({1000}, ag::float64, -2, 3, 42).to_vector<double>();
  const auto av = a.to_vector<float>();
  for (size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(d[i], av[i], 1e-6);
}

TEST(Random, UniformMoments) {
  double mean, var;
  moments<float>(ag::random_uniform({200000}, ag::float32, 0, 1, 7), mean, var);
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12, 0.002);
  moments<double>(ag::random_uniform({200000}, ag::float64, 10, 20, 8), mean, var);
  EXPECT_NEAR(mean, 15, 0.05);
  EXPECT_NEAR(var, 100.0 / 12, 0.1);
}

TEST(Random, UniformNeverReachesMaxval) {
  // An interval 8 float32 ulps wide: rounding minval + u * width up to maxval would happen for
  // 1 in 16 elements if it were not prevented.
  const double lo = 1.0, hi = 1.0 + std::ldexp(1.0, -20);
  for (float v : ag::random_uniform({4000}, ag::float32, lo, hi, 3).to_vector<float>()) {
    ASSERT_GE(v, static_cast<float>(lo));
    ASSERT_LT(v, static_cast<float>(hi));
  }
  // The clamp only applies to a proper interval: minval > maxval keeps the computed values.
  for (float v : ag::random_uniform({1000}, ag::float32, 5, 1, 3).to_vector<float>()) {
    ASSERT_GT(v, 1.f);
    ASSERT_LE(v, 5.f);
  }
  EXPECT_GT(ag::reduce_max(ag::random_uniform({1000}, ag::float32, 5, 1, 3)).item<float>(), 4.9f);
  const double dlo = 1.0, dhi = 1.0 + std::ldexp(1.0, -49);
  for (double v : ag::random_uniform({4000}, ag::float64, dlo, dhi, 4).to_vector<double>()) {
    ASSERT_GE(v, dlo);
    ASSERT_LT(v, dhi);
  }
}

TEST(Random, UniformIntegersCoverHalfOpenRange) {
  const ag::Tensor t = ag::random_uniform({5000}, ag::int32, -3, 4, 11);
  EXPECT_EQ(t.dtype(), ag::int32);
  std::vector<int> hist(7, 0);
  for (int v : t.to_vector<int>()) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    ++hist[v + 3];
  }
  for (int h : hist) EXPECT_NEAR(h, 5000 / 7.0, 150);
  const ag::Tensor l = ag::random_uniform({2000}, ag::int64, 0, 1e15, 12);
  for (int64_t v : l.to_vector<int64_t>()) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 1000000000000000);
  }
  AG_EXPECT_ERROR(ag::ValueError, ag::random_uniform({2}, ag::int32, 5, 5), "ag::random_uniform", "minval");
  AG_EXPECT_ERROR(ag::TypeError, ag::random_uniform({2}, ag::bool_), "ag::random_uniform", "bool");
}

TEST(Random, NormalMomentsAndDeterminism) {
  const ag::Tensor a = ag::random_normal({200000}, ag::float64, 2, 3, 5);
  EXPECT_EQ(a.to_vector<double>(), ag::random_normal({200000}, ag::float64, 2, 3, 5).to_vector<double>());
  EXPECT_NE(a.to_vector<double>(), ag::random_normal({200000}, ag::float64, 2, 3, 6).to_vector<double>());
  double mean, var;
  moments<double>(a, mean, var);
  EXPECT_NEAR(mean, 2, 0.05);
  EXPECT_NEAR(std::sqrt(var), 3, 0.05);
  // Roughly 68% within one standard deviation.
  int within = 0;
  for (double v : a.to_vector<double>()) within += std::abs(v - 2) < 3;
  EXPECT_NEAR(within / 200000.0, 0.6827, 0.01);
  const ag::Tensor f = ag::random_normal({3, 4});
  EXPECT_EQ(f.dtype(), ag::float32);
  EXPECT_EQ(agtest::dims(f), (Dims{3, 4}));
  for (float v : f.to_vector<float>()) EXPECT_TRUE(std::isfinite(v));
  AG_EXPECT_ERROR(ag::TypeError, ag::random_normal({2}, ag::int32), "ag::random_normal", "int32");
  AG_EXPECT_ERROR(ag::ValueError, ag::random_normal({-2}), "ag::random_normal");
}

}  // namespace
