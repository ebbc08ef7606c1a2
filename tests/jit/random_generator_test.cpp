// ag::random::Generator in compiled code: the draws of a JIT-compiled function advance the same
// state and give the same numbers as eagerly and in the interpreter, call after call, also
// inside staged loops and branches; Monte Carlo estimates with one draw per loop iteration.
#include "jit_test_util.h"

namespace {

using ag::Tensor;
using ag::random::Generator;

// One call of `fn(g, args...)` eagerly, interpreted and compiled, with three generators of one
// seed, `calls` times: every call's results agree (within `tol`) and the three states stay equal.
template <class F, class... Args>
void expect_same_draws_tol(const std::string& what, F fn, int calls, agtest::Tol tol, const Args&... args) {
  Generator eager_g(1234), interp_g(1234), jit_g(1234);
  auto interp = ag::function([&](const Args&... a) { return fn(interp_g, a...); }, {.jit_compile = false});
  auto jit = ag::function([&](const Args&... a) { return fn(jit_g, a...); });
  for (int call = 0; call < calls; ++call) {
    const auto expected = fn(eager_g, args...);
    const std::string where = what + ", call " + std::to_string(call);
    agtest::expect_same(expected, interp(args...), tol, where + " [interpreter]");
    agtest::expect_same(expected, jit(args...), tol, where + " [jit]");
  }
  EXPECT_EQ(interp_g.state().value().to_vector<int64_t>(), eager_g.state().value().to_vector<int64_t>()) << what;
  EXPECT_EQ(jit_g.state().value().to_vector<int64_t>(), eager_g.state().value().to_vector<int64_t>()) << what;
  EXPECT_EQ(jit.tracing_count(), 1) << what;
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1) << what << ": the JIT did not compile the function";
  // The draws are native: a typed helper fills the node's buffer or gives a fused draw its words.
  const std::string ir = jit.get_concrete_function(args...).llvm_ir(false);
  EXPECT_TRUE(agtest::ir_calls(ir, "agc_rt_random")) << what;
}

template <class F, class... Args>
void expect_same_draws(const std::string& what, F fn, int calls, const Args&... args) {
  expect_same_draws_tol(what, fn, calls, agtest::Tol{}, args...);
}

TEST(JitRandom, DrawsAgreeCallAfterCall) {
  expect_same_draws("noise", [](Generator& g, const Tensor& x) { return x * 2 + g.normal({4, 3}); }, 4, ag::ones({4, 3}));
  expect_same_draws("ints", [](Generator& g, const Tensor& x) { return x + g.uniform({5}, ag::int32, 0, 10); }, 3,
                    ag::constant({1, 2, 3, 4, 5}));
  expect_same_draws("float64 and a fused chain after the draw",
                    [](Generator& g, const Tensor& x) { return ag::tanh(g.uniform({8}, ag::float64, -1, 1) * x) + 1; }, 3,
                    ag::ones({8}, ag::float64));
}

// pi from the fraction of uniform points inside the unit circle, one batch per iteration of a
// staged loop whose trip count is an argument.
Tensor estimate_pi(Generator& g, const Tensor& batches) {
  auto [i, inside] = ag::while_loop(
      [&](const Tensor& it, const Tensor&) { return it < batches; },
      [&](const Tensor& it, const Tensor& count) {
        const Tensor x = g.uniform({1000}), y = g.uniform({1000});
        return std::tuple<Tensor, Tensor>{it + 1, count + ag::reduce_sum(ag::cast(x * x + y * y < 1.f, ag::int32))};
      },
      std::tuple<Tensor, Tensor>{ag::zeros({}, ag::int32), ag::zeros({}, ag::int32)});
  return ag::cast(inside, ag::float64) * 4.0 / (ag::cast(batches, ag::float64) * 1000.0);
}

TEST(JitRandom, MonteCarloInAStagedLoop) {
  expect_same_draws("estimate_pi", estimate_pi, 3, Tensor(20));
  Generator g(99);
  auto f = ag::function([&](const Tensor& n) { return estimate_pi(g, n); });
  EXPECT_NEAR(f(Tensor(200)).item<double>(), 3.14159, 0.01);  // 200k points: standard error 0.0037
}

// A draw in the loop condition runs once per evaluation: the number of tries until a uniform
// number reaches 0.9 (geometric), summed over `trials` staged trials.
Tensor count_tries(Generator& g, const Tensor& trials) {
  auto [t, total] = ag::while_loop(
      [&](const Tensor& it, const Tensor&) { return it < trials; },
      [&](const Tensor& it, const Tensor& sum) {
        auto [tries] = ag::while_loop([&](const Tensor&) { return g.uniform({}) < 0.9f; },
                                      [&](const Tensor& k) { return k + 1; }, std::tuple<Tensor>{ag::zeros({}, ag::int32)});
        return std::tuple<Tensor, Tensor>{it + 1, sum + tries};
      },
      std::tuple<Tensor, Tensor>{ag::zeros({}, ag::int32), ag::zeros({}, ag::int32)});
  return total;
}

TEST(JitRandom, DrawsInALoopCondition) {
  expect_same_draws("count_tries", count_tries, 3, Tensor(50));
  Generator g(5);
  auto f = ag::function([&](const Tensor& n) { return count_tries(g, n); });
  // 20000 trials of a geometric count with mean 0.9 / 0.1 = 9 (standard error ~0.07).
  EXPECT_NEAR(f(Tensor(20000)).item<double>() / 20000, 9.0, 0.3);
}

TEST(JitRandom, DrawsInBranches) {
  // Only the branch taken draws: the counter advances by what that branch drew.
  expect_same_draws("else branch taken",
                    [](Generator& g, const Tensor& x) {
                      return ag::cond(ag::reduce_sum(x) > 0.f, [&] { return g.uniform({2}); }, [&] { return g.normal({2}) - 10.f; });
                    },
                    2, ag::constant({1.f, -3.f}));
  expect_same_draws("then branch taken",
                    [](Generator& g, const Tensor& x) {
                      return ag::cond(ag::reduce_sum(x) > 0.f, [&] { return g.uniform({2}); }, [&] { return g.normal({2}) - 10.f; });
                    },
                    2, ag::constant({1.f, 3.f}));
}

}  // namespace

namespace {

// Whether the IR fills a draw's buffer with the stream kernel (agc_rt_random, not _words).
bool fills_a_buffer(const std::string& ir) { return ir.find("@agc_rt_random(") != std::string::npos; }

TEST(JitRandom, UniformDrawsFuseIntoTheirConsumerBitForBit) {
  const agtest::Tol exact{0, 0};
  // Fused into an elementwise loop, into reductions (a max is exact whatever the order; a sum's
  // order differs between backends), and with an interval so narrow that most float32 values
  // round up to maxval and take the clamp below it.
  auto into_add = [](Generator& g, const Tensor& x) { return x + g.uniform({64, 3}, ag::float32, -1, 2); };
  auto into_max = [](Generator& g, const Tensor& x) { return ag::reduce_max(g.uniform({1000}, ag::float64) * x); };
  auto into_sum = [](Generator& g, const Tensor& x) { return ag::reduce_sum(g.uniform({1000}, ag::float64) * x); };
  auto clamped = [](Generator& g, const Tensor& x) { return x * g.uniform({256}, ag::float32, 1.0, 1.0000002); };
  expect_same_draws_tol("fused into an add", into_add, 3, exact, ag::ones({64, 3}));
  expect_same_draws_tol("fused into a max", into_max, 3, exact, ag::ones({1000}, ag::float64));
  expect_same_draws("fused into a sum", into_sum, 3, ag::ones({1000}, ag::float64));
  expect_same_draws_tol("clamped below maxval", clamped, 3, exact, ag::ones({256}));
  Generator g(7);
  {
    const std::string plan = agtest::fused_plan([&](const Tensor& x) { return into_add(g, x); }, {}, ag::ones({64, 3}));
    EXPECT_NE(agtest::plan_line(plan, "RandomUniform").find("[fused"), std::string::npos) << plan;
    auto f = ag::function([&](const Tensor& x) { return into_add(g, x); });
    const std::string ir = f.get_concrete_function(ag::ones({64, 3})).llvm_ir(false);
    EXPECT_TRUE(agtest::ir_calls(ir, "agc_rt_random_words")) << ir;
    EXPECT_FALSE(fills_a_buffer(ir)) << ir;
  }
  // Not fused: a draw broadcast into a larger loop (it would be recomputed per row), one read by
  // two consumers, and a normal draw (its log and cos are libm's, in the kernel).
  auto broadcast = [](Generator& g, const Tensor& x) { return x + g.uniform({4}); };
  auto two_uses = [](Generator& g, const Tensor& x) {
    const Tensor u = g.uniform({16});
    return std::tuple<Tensor, Tensor>{u + x, ag::reduce_max(u * x)};
  };
  expect_same_draws_tol("broadcast", broadcast, 2, exact, ag::ones({8, 4}));
  expect_same_draws_tol("two consumers", two_uses, 2, exact, ag::ones({16}));
  for (const auto& [what, plan] : {std::pair{"broadcast", agtest::fused_plan([&](const Tensor& x) { return broadcast(g, x); }, {}, ag::ones({8, 4}))},
                                   std::pair{"two consumers", agtest::fused_plan([&](const Tensor& x) { return two_uses(g, x); }, {}, ag::ones({16}))}}) {
    const std::string line = agtest::plan_line(plan, "RandomUniform");
    ASSERT_FALSE(line.empty()) << what << "\n" << plan;
    EXPECT_EQ(line.find("[fused"), std::string::npos) << what << "\n" << plan;
  }
}

}  // namespace
