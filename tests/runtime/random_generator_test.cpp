// ag::random::Generator: draws advance the state eagerly and on every call of a traced function;
// the same seed gives the same sequence eagerly and in the interpreter; the stateless
// constructors are frozen when traced (the guide's add_noise).
#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "ag/detail/kernel_set.h"
#include "ag/random.h"
#include "test_util.h"

namespace {

std::vector<int64_t> state_of(const ag::random::Generator& g) { return g.state().value().to_vector<int64_t>(); }

TEST(RandomGenerator, DrawsAdvanceTheCounterAndDiffer) {
  ag::random::Generator g(7);
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{7, 0}));
  const ag::Tensor a = g.uniform({3, 2});
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{7, 6}));  // one word per uniform element
  const ag::Tensor b = g.uniform({3, 2});
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{7, 12}));
  EXPECT_NE(a.to_vector<float>(), b.to_vector<float>());
  g.normal({4});
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{7, 20}));  // two words per normal element
  EXPECT_EQ(a.shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(a.dtype(), ag::float32);
}

TEST(RandomGenerator, SameSeedSameSequenceAndReset) {
  ag::random::Generator g(42), h(42), other(43);
  std::vector<std::vector<double>> first;
  for (int i = 0; i < 3; ++i) first.push_back(g.normal({5}, ag::float64).to_vector<double>());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(h.normal({5}, ag::float64).to_vector<double>(), first[i]) << "draw " << i;
  EXPECT_NE(other.normal({5}, ag::float64).to_vector<double>(), first[0]);
  g.reset_from_seed(42);
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{42, 0}));
  EXPECT_EQ(g.normal({5}, ag::float64).to_vector<double>(), first[0]);
}

TEST(RandomGenerator, FirstDrawEqualsTheStatelessConstructor) {
  ag::random::Generator g(11), h(11);
  EXPECT_EQ(g.uniform({2, 3}, ag::float64, -2, 5).to_vector<double>(),
            ag::random_uniform({2, 3}, ag::float64, -2, 5, 11).to_vector<double>());
  EXPECT_EQ(h.normal({7}, ag::float32, 1, 3).to_vector<float>(), ag::random_normal({7}, ag::float32, 1, 3, 11).to_vector<float>());
  // The second draw continues the stream: the stateless constructor's words 6..11.
  const auto both = ag::random_uniform({12}, ag::float64, 0, 1, 11).to_vector<double>();
  const auto second = g.uniform({6}, ag::float64).to_vector<double>();
  EXPECT_EQ(second, std::vector<double>(both.begin() + 6, both.end()));
}

TEST(RandomGenerator, RangesAndMoments) {
  ag::random::Generator g(3);
  const auto ints = g.uniform({4000}, ag::int32, -3, 4).to_vector<int32_t>();
  EXPECT_EQ(*std::min_element(ints.begin(), ints.end()), -3);
  EXPECT_EQ(*std::max_element(ints.begin(), ints.end()), 3);
  const auto u = g.uniform({4000}, ag::float32, 2, 3).to_vector<float>();
  for (float x : u) ASSERT_TRUE(x >= 2 && x < 3) << x;
  const auto z = g.normal({20000}, ag::float64, 5, 2).to_vector<double>();
  double mean = 0, var = 0;
  for (double x : z) mean += x;
  mean /= static_cast<double>(z.size());
  for (double x : z) var += (x - mean) * (x - mean);
  var /= static_cast<double>(z.size());
  EXPECT_NEAR(mean, 5, 0.05);  // 3 standard errors: 2 / sqrt(20000) = 0.014
  EXPECT_NEAR(std::sqrt(var), 2, 0.05);
  EXPECT_EQ(g.uniform({0, 3}).num_elements(), 0);
  EXPECT_EQ(g.normal({}).rank(), 0);
}

TEST(RandomGenerator, ErrorsNameTheDrawAndTheLine) {
  ag::random::Generator g(1);
  AG_EXPECT_ERROR(ag::TypeError, g.normal({2}, ag::int32), "Generator::normal", "float32 or float64", "int32",
                  "random_generator_test.cpp:");
  AG_EXPECT_ERROR(ag::TypeError, g.uniform({2}, ag::bool_), "Generator::uniform", "numeric", "bool");
  AG_EXPECT_ERROR(ag::ValueError, g.uniform({2}, ag::int64, 3, 3), "Generator::uniform", "minval < maxval", "[3, 3)");
  AG_EXPECT_ERROR(ag::ValueError, g.uniform({2, -1}), "Generator::uniform", "[2,?]", "unknown dim");
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{1, 0}));  // a failed draw takes nothing
}

TEST(RandomGenerator, ConcurrentDrawsGetDisjointNumbers) {
  ag::random::Generator g(5);
  constexpr int kThreads = 4, kDraws = 200;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kDraws; ++i) {
        const auto v = g.uniform({3}, ag::float64).to_vector<double>();
        got[t].insert(got[t].end(), v.begin(), v.end());
      }
    });
  for (auto& th : threads) th.join();
  std::set<double> all;
  for (const auto& v : got) all.insert(v.begin(), v.end());
  EXPECT_EQ(state_of(g)[1], kThreads * kDraws * 3);
  // Together the threads drew exactly the stream's first words, each once.
  const auto stream = ag::random_uniform({kThreads * kDraws * 3}, ag::float64, 0, 1, 5).to_vector<double>();
  EXPECT_EQ(all, std::set<double>(stream.begin(), stream.end()));
}

// The guide's add_noise: a stateless constructor is frozen into the graph like any C++ value,
// a Generator draws on every call, eagerly and traced alike.
TEST(RandomGenerator, TracedDrawsRunOnEveryCallFrozenConstructorsDoNot) {
  auto frozen = ag::function([] { return ag::eye(3) + ag::random_normal({3, 3}); }, {.jit_compile = false});
  EXPECT_EQ(frozen().to_vector<float>(), frozen().to_vector<float>());

  ag::random::Generator eager_g(9), traced_g(9);
  auto add_noise = [](ag::random::Generator& g) { return ag::eye(3) + g.normal({3, 3}); };
  auto traced = ag::function([&] { return add_noise(traced_g); }, {.jit_compile = false});
  for (int call = 0; call < 4; ++call)
    EXPECT_EQ(traced().to_vector<float>(), add_noise(eager_g).to_vector<float>()) << "call " << call;
  EXPECT_EQ(traced.tracing_count(), 1);
  EXPECT_EQ(state_of(traced_g), state_of(eager_g));
}

TEST(RandomGenerator, UnusedDrawsStillAdvanceAndAreKeptInOrder) {
  ag::random::Generator g(2);
  auto f = ag::function(
      [&](ag::Tensor x) {
        g.uniform({10});  // result unused: pruning keeps the draw, as eagerly the state advances
        return x + g.uniform({2});
      },
      {.jit_compile = false});
  const ag::Tensor out = f(ag::zeros({2}));
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{2, 12}));
  const auto stream = ag::random_uniform({12}, ag::float32, 0, 1, 2).to_vector<float>();
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(stream.begin() + 10, stream.end()));
  const std::string text = f.get_concrete_function(ag::zeros({2})).graph_text();
  EXPECT_NE(text.find("RandomUniform"), std::string::npos) << text;
  EXPECT_NE(text.find("state=variable 'generator' (int64[2])"), std::string::npos) << text;
  EXPECT_NE(text.find("range=[0, 1)"), std::string::npos) << text;
}

// A random walk: one draw per iteration of a staged loop whose trip count is a tensor.
ag::Tensor random_walk(ag::random::Generator& g, const ag::Tensor& steps) {
  auto [i, x] = ag::while_loop([&](const ag::Tensor& it, const ag::Tensor&) { return it < steps; },
                               [&](const ag::Tensor& it, const ag::Tensor& pos) {
                                 return std::tuple<ag::Tensor, ag::Tensor>{it + 1, pos + g.normal({2})};
                               },
                               std::tuple<ag::Tensor, ag::Tensor>{ag::zeros({}, ag::int32), ag::zeros({2})});
  return x;
}

TEST(RandomGenerator, DrawsInsideAStagedLoop) {
  ag::random::Generator eager_g(4), traced_g(4);
  auto walk = ag::function([&](ag::Tensor steps) { return random_walk(traced_g, steps); }, {.jit_compile = false});
  for (int steps : {3, 0, 5}) {
    const ag::Tensor n(steps);
    EXPECT_EQ(walk(n).to_vector<float>(), random_walk(eager_g, n).to_vector<float>()) << steps << " steps";
  }
  EXPECT_EQ(walk.tracing_count(), 1);
  EXPECT_EQ(state_of(traced_g), (std::vector<int64_t>{4, 2 * 2 * 8}));
}

TEST(RandomGenerator, ResetInsideATracedFunctionIsStaged) {
  ag::random::Generator g(8);
  auto f = ag::function(
      [&] {
        g.reset_from_seed(8);
        return g.uniform({3});
      },
      {.jit_compile = false});
  const auto first = f().to_vector<float>();
  EXPECT_EQ(f().to_vector<float>(), first);  // every call starts the stream again
  EXPECT_EQ(first, ag::random_uniform({3}, ag::float32, 0, 1, 8).to_vector<float>());
}

TEST(RandomGenerator, TracingAloneDrawsNothingRunningEagerlyDrawsAsEager) {
  ag::random::Generator g(6), eager_g(6);
  auto f = ag::function([&](ag::Tensor x) { return x + g.uniform({2}); }, {.jit_compile = false});
  f.get_concrete_function(ag::zeros({2}));  // traced, not run
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{6, 0}));
  ag::run_functions_eagerly(true);
  const ag::Tensor eagerly = f(ag::zeros({2}));
  ag::run_functions_eagerly(false);
  EXPECT_EQ(eagerly.to_vector<float>(), eager_g.uniform({2}).to_vector<float>());
  EXPECT_EQ(f(ag::zeros({2})).to_vector<float>(), eager_g.uniform({2}).to_vector<float>());
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{6, 4}));
}

TEST(RandomGenerator, CreatingOneOnEveryTraceIsAnError) {
  auto f = ag::function(
      [](ag::Tensor x) {
        ag::random::Generator g(1);
        return x + g.uniform({});
      },
      {.jit_compile = false});
  // A Generator is a Variable: creating one on every trace raises on the first call, as TensorFlow.
  AG_EXPECT_ERROR(ag::ValueError, f(ag::Tensor(1.f)), "creates an ag::Variable on every trace");
}

// ag::random::uniform / normal: tf.random.uniform / normal, from the global Generator.
TEST(RandomGenerator, GlobalDrawsAreFreshOnEveryCallAndSetSeedRestarts) {
  auto f = ag::function([](ag::Tensor x) { return x + ag::random::uniform({3}); }, {.jit_compile = false});
  ag::random::set_seed(21);
  const auto first = f(ag::zeros({3})).to_vector<float>();
  const auto second = f(ag::zeros({3})).to_vector<float>();
  EXPECT_NE(first, second);
  EXPECT_EQ(first, ag::random_uniform({3}, ag::float32, 0, 1, 21).to_vector<float>());
  ag::random::set_seed(21);  // eagerly, the same stream
  EXPECT_EQ(ag::random::uniform({3}).to_vector<float>(), first);
  EXPECT_EQ(ag::random::uniform({3}).to_vector<float>(), second);
  EXPECT_EQ(ag::random::global_generator().state().value().to_vector<int64_t>(), (std::vector<int64_t>{21, 6}));
  EXPECT_EQ(ag::random::normal({2}, ag::float64).dtype(), ag::float64);
}

TEST(RandomGenerator, GlobalGeneratorMayBeFirstUsedInALaterTrace) {
  // When this test runs alone (ctest runs each test in its own process), the global Generator is
  // created inside the second trace, where creating a Variable is otherwise an error.
  auto f = ag::function(
      [](ag::Tensor x) { return x.rank() == 1 ? x : x + ag::random::normal({}); }, {.jit_compile = false});
  f(ag::zeros({2}));
  EXPECT_EQ(f(ag::Tensor(1.f)).rank(), 0);
  EXPECT_EQ(f.tracing_count(), 2);
}

}  // namespace

namespace {
// The stream as documented (splitmix64 of splitmix64(seed) ^ word), written here independently
// of the kernels.
uint64_t reference_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double reference_uniform01(uint64_t seed, uint64_t c) {
  return static_cast<double>(reference_mix(reference_mix(seed) ^ c) >> 11) * 0x1.0p-53;
}
}  // namespace

// One seed gives one sequence on every CPU: every kernel level this CPU can run draws exactly
// the reference's bits (uniform float64, and float32 / int32 from the same words).
TEST(RandomGenerator, EveryKernelLevelDrawsTheReferenceStreamBitForBit) {
  const int64_t n = 4099;  // not a multiple of any vector width
  const uint64_t seed = 12345, counter = 77;
  int levels = 0;
  for (const ag::detail::KernelSet* k : ag::detail::built_kernel_sets()) {
    if (!ag::detail::missing_cpu_features(*k).empty()) continue;
    ++levels;
    ag::Tensor f64 = ag::zeros({n}, ag::float64), f32 = ag::zeros({n}, ag::float32), i32 = ag::zeros({n}, ag::int32);
    k->random_fill(f64.dtype(), ag::detail::impl_of(f64)->data, n, false, seed, counter, -2.0, 3.0);
    k->random_fill(f32.dtype(), ag::detail::impl_of(f32)->data, n, false, seed, counter, -2.0, 3.0);
    k->random_fill(i32.dtype(), ag::detail::impl_of(i32)->data, n, false, seed, counter, -5.0, 9.0);
    const auto d = f64.to_vector<double>();
    const auto f = f32.to_vector<float>();
    const auto i = i32.to_vector<int32_t>();
    for (int64_t j = 0; j < n; ++j) {
      const double u = reference_uniform01(seed, counter + static_cast<uint64_t>(j));
      ASSERT_EQ(d[static_cast<size_t>(j)], -2.0 + u * 5.0) << k->isa << " element " << j;
      ASSERT_EQ(f[static_cast<size_t>(j)], static_cast<float>(-2.0 + u * 5.0)) << k->isa << " element " << j;
      ASSERT_EQ(i[static_cast<size_t>(j)], static_cast<int32_t>(std::floor(-5.0 + u * 14.0))) << k->isa << " element " << j;
    }
  }
  EXPECT_GE(levels, 1);
}
