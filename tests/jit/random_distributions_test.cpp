// Generator::bernoulli and ::categorical: their frequencies, and one seed giving the same draws
// eagerly, on the interpreter and in compiled code, call after call.
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

}  // namespace
