// Generator::truncated_normal, ::bernoulli and ::categorical: their distributions, and one seed
// giving the same draws eagerly, on the interpreter and in compiled code, call after call.
#include <cmath>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

TEST(RandomDistributions, FrequenciesMatchTheProbabilities) {
  ag::random::Generator g(42);
  const Tensor hits = g.bernoulli(ag::constant(0.3), {200000});
  EXPECT_EQ(hits.dtype(), ag::bool_);
  EXPECT_NEAR(ag::reduce_mean(ag::cast(hits, ag::float64)).item<double>(), 0.3, 0.005);
  // p per element, broadcast: a row of certainties and a row of impossibilities.
  const Tensor sure = g.bernoulli(ag::constant(std::vector<float>{1, 0}, {2, 1}), {2, 1000});
  EXPECT_EQ(ag::reduce_sum(ag::cast(sure, ag::int32), 1).to_vector<int64_t>(), (std::vector<int64_t>{1000, 0}));

  const std::vector<double> p = {0.1, 0.6, 0.3};
  const Tensor logits = ag::reshape(ag::log(ag::constant(p)), {1, 3});
  const Tensor draws = g.categorical(logits, 100000);
  EXPECT_EQ(draws.dtype(), ag::int64);
  EXPECT_EQ(draws.shape(), (ag::Shape{1, 100000}));
  for (int64_t k = 0; k < 3; ++k) {
    const double freq = ag::reduce_mean(ag::cast(draws == k, ag::float64)).item<double>();
    EXPECT_NEAR(freq, p[static_cast<size_t>(k)], 0.01) << "class " << k;
  }
  EXPECT_THROW(g.categorical(ag::constant(std::vector<float>{1, 2}), 3), ag::ValueError);
  EXPECT_THROW(g.bernoulli(ag::constant(1)), ag::TypeError);
}

TEST(RandomDistributions, OneSeedSameDrawsOnEveryBackend) {
  const Tensor p = ag::constant(std::vector<float>{0.2f, 0.5f, 0.9f, 0.05f});
  const Tensor logits = ag::constant(std::vector<float>{0, 1, 2, -1, 3, 0.5f}, {2, 3});
  auto run = [&](std::optional<bool> jit) {
    ag::random::Generator g(7);
    auto draw = [&g](Tensor p, Tensor logits) { return std::tuple{g.bernoulli(p, {3, 4}), g.categorical(logits, 5)}; };
    std::vector<std::vector<int64_t>> out;
    auto record = [&](const std::tuple<Tensor, Tensor>& r) {
      out.push_back(ag::cast(std::get<0>(r), ag::int64).to_vector<int64_t>());
      out.push_back(std::get<1>(r).to_vector<int64_t>());
    };
    if (!jit.has_value()) {
      for (int call = 0; call < 3; ++call) record(draw(p, logits));
    } else {
      auto f = ag::function(draw, {.jit_compile = *jit});
      for (int call = 0; call < 3; ++call) record(f(p, logits));
      EXPECT_EQ(f.stats().traces, 1);
      if (*jit) EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
    }
    return out;
  };
  const auto eager = run(std::nullopt);
  EXPECT_EQ(eager, run(false));
  EXPECT_EQ(eager, run(true));
  EXPECT_NE(eager[0], eager[2]);  // each call draws anew
}


// The truncated normal: inside two standard deviations, with the truncated distribution's
// moments and quantiles, and (float64) the exact inverse CDF of the uniform word it drew.
TEST(RandomDistributions, TruncatedNormal) {
  ag::random::Generator g(5);
  const Tensor x = g.truncated_normal({200000}, ag::float64, 1.0, 3.0);
  EXPECT_LE(ag::reduce_max(ag::abs(x - 1.0)).item<double>(), 6.0);
  const Tensor z = (x - 1.0) / 3.0;
  // Mass in [-2, 2]: Z = erf(sqrt 2); variance 1 - 4 phi(2) / Z; P(z < 1) = (Phi(1) - Phi(-2)) / Z.
  const double mass = std::erf(std::sqrt(2.0)), phi2 = std::exp(-2.0) / std::sqrt(2 * M_PI);
  const double below_one = (0.5 * std::erfc(-1 / std::sqrt(2.0)) - 0.5 * std::erfc(std::sqrt(2.0))) / mass;
  EXPECT_NEAR(ag::reduce_mean(z).item<double>(), 0.0, 0.01);
  EXPECT_NEAR(ag::reduce_mean(z * z).item<double>(), 1 - 4 * phi2 / mass, 0.01);
  EXPECT_NEAR(ag::reduce_mean(ag::cast(z < 1.0, ag::float64)).item<double>(), below_one, 0.005);
  // The draw is the inverse CDF of the uniform word: erf(z / sqrt 2) = y, y uniform in (-Z, Z).
  const Tensor t = ag::random::Generator(9).truncated_normal({1000}, ag::float64);
  const Tensor y = ag::random::Generator(9).uniform({1000}, ag::float64, -mass, mass);
  EXPECT_LE(ag::reduce_max(ag::abs(ag::erf(t / std::sqrt(2.0)) - y)).item<double>(), 1e-13);
  const Tensor f = ag::random::Generator(9).truncated_normal({1000});
  EXPECT_EQ(f.dtype(), ag::float32);
  EXPECT_LE(ag::reduce_max(ag::abs(ag::cast(f, ag::float64) - t)).item<double>(), 1e-5);
  EXPECT_THROW(g.truncated_normal({2}, ag::int32), ag::TypeError);
  EXPECT_THROW(g.truncated_normal({2}, ag::float32, 0, -1), ag::ValueError);
}

TEST(RandomDistributions, TruncatedNormalOnEveryBackend) {
  auto run = [&](std::optional<bool> jit) {
    ag::random::Generator g(3);
    auto draw = [&g](Tensor scale) { return g.truncated_normal({4, 5}, ag::float32, 0.5, 2.0) * scale; };
    std::vector<Tensor> out;
    const Tensor one = ag::constant(1.0f);
    if (!jit.has_value()) {
      for (int call = 0; call < 3; ++call) out.push_back(draw(one));
    } else {
      auto f = ag::function(draw, {.jit_compile = *jit});
      for (int call = 0; call < 3; ++call) out.push_back(f(one));
    }
    return out;
  };
  const std::vector<Tensor> eager = run(std::nullopt), interp = run(false), jit = run(true);
  // Equal up to the few-ULP differences of log, erf and exp between the eager kernels and the
  // JIT's (the uniform words are the same bits).
  for (size_t i = 0; i < eager.size(); ++i) {
    EXPECT_TRUE(agtest::same_tensor(eager[i], interp[i], {.rtol = 1e-5, .atol = 1e-5})) << i;
    EXPECT_TRUE(agtest::same_tensor(eager[i], jit[i], {.rtol = 1e-5, .atol = 1e-5})) << i;
  }
  EXPECT_FALSE(agtest::same_tensor(eager[0], eager[1]));  // each call draws anew
}

}  // namespace
