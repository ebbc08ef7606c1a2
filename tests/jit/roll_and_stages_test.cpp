// Rolls and staged loops of many stages, as an explicit ODE solver writes them
// (bench/apps/runge_kutta.cpp): a concat reads a contiguous slice in place (the plan makes the
// slice a view, no copy) while a slice that is not contiguous is still copied, and rolls read
// elementwise are computed by segments (concat_segments_test.cpp has the rules); and a staged loop
// whose body holds many loop nests gives those nests, not itself, to the compile's second module
// (module_split.h). Every case eager == interpreter == JIT; with the loop inside a while, under
// a tape inside the trace and outside it, and split == whole, bit for bit.
#include <string>

#include "jit_test_util.h"

namespace {

using ag::Slice;
using ag::Tensor;

// x shifted by k places along axis 0: result[i] = x[i - k].
Tensor roll(const Tensor& x, int64_t k) { return ag::concat({x(Slice{-k}), x(Slice{ag::none, -k})}, 0); }

Tensor lorenz96(const Tensor& x) { return (roll(x, -1) - roll(x, 2)) * roll(x, 1) - x + 8.0f; }

// How many Slice nodes `plan` has, and how many of them are copied into a buffer of their own
// (the others are views of their input, or a single element held in a register).
std::pair<int, int> slice_copies(const std::string& plan) {
  int nodes = 0, copies = 0;
  for (size_t at = plan.find(" = Slice("); at != std::string::npos; at = plan.find(" = Slice(", at + 1)) {
    ++nodes;
    const std::string line = plan.substr(at, plan.find('\n', at) - at);
    copies += line.find("[arena]") != std::string::npos || line.find("[owned]") != std::string::npos;
  }
  return {nodes, copies};
}

TEST(JitRolls, AConcatReadsContiguousSlicesInPlace) {
  // Lorenz-96's three rolls read elementwise: computed segment by segment (concat_segments.h),
  // each segment reading x in place, the result's one concat written by its pieces.
  const Tensor x = ag::random_uniform({37}, ag::float32, -1, 1, 1);
  agtest::expect_three_way("lorenz96", lorenz96, {.rtol = 0, .atol = 0}, x);
  const std::string plan = agtest::fused_plan(lorenz96, {}, x);
  EXPECT_EQ(slice_copies(plan).second, 0) << plan;
  EXPECT_EQ(agtest::occurrences(plan, " = Concat("), 1) << plan;
  EXPECT_NE(plan.find("[box of %"), std::string::npos) << plan;

  // Rows of a matrix (contiguous) and a run inside one row of a 3-D tensor (contiguous): views.
  // Columns (rows of 5 of 10 elements) are not one run: copied.
  const Tensor m = ag::random_uniform({4, 10}, ag::float32, -1, 1, 2), t = ag::random_uniform({4, 10, 3}, ag::float32, -1, 1, 3);
  auto rows = [](Tensor a) { return ag::concat({a(Slice{2}), a(Slice{ag::none, 2})}, 0); };
  auto run = [](Tensor a) { return ag::concat({a(Slice{1, 2}, Slice{5}), a(Slice{3, 4}, Slice{ag::none, 5})}, 1); };
  auto columns = [](Tensor a) { return ag::concat({a(ag::all, Slice{5}), a(ag::all, Slice{ag::none, 5})}, 1); };
  agtest::expect_three_way("rows", rows, {.rtol = 0, .atol = 0}, m);
  agtest::expect_three_way("run", run, {.rtol = 0, .atol = 0}, t);
  agtest::expect_three_way("columns", columns, {.rtol = 0, .atol = 0}, m);
  EXPECT_EQ(slice_copies(agtest::fused_plan(rows, {}, m)), std::make_pair(2, 0));
  EXPECT_EQ(slice_copies(agtest::fused_plan(run, {}, t)), std::make_pair(2, 0));
  EXPECT_EQ(slice_copies(agtest::fused_plan(columns, {}, m)), std::make_pair(2, 2));
}

TEST(JitRolls, InAStagedLoopUnderTapes) {
  // Euler steps of Lorenz-96 in a staged loop, the gradient of the final state's sum with
  // respect to the initial state under a tape inside the trace, and outside it.
  auto steps = [](Tensor x, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     x = x + 0.01f * lorenz96(x);
                     i += 1;
                   },
                   ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("roll_and_stages_test.cpp", 0));
    return x;
  };
  const Tensor x = ag::random_uniform({29}, ag::float32, -1, 1, 4);
  agtest::expect_three_way("20 Euler steps", steps, {.rtol = 1e-5, .atol = 1e-5}, x, ag::constant(20));
  auto with_gradient = [](Tensor x0) {
    ag::GradientTape tape;
    tape.watch(x0);
    Tensor x = x0;
    for (int k = 0; k < 3; ++k) x = x + 0.01f * lorenz96(x);  // unrolled: the tape sees each step
    return std::make_tuple(x, tape.gradient(ag::reduce_sum(x), x0));
  };
  agtest::expect_three_way("gradient inside the trace", with_gradient, {.rtol = 1e-5, .atol = 1e-5}, x);
  auto f = ag::function([](Tensor x0) { return x0 + 0.01f * lorenz96(x0); });
  Tensor x0 = x;
  ag::GradientTape tape;
  tape.watch(x0);
  const Tensor g = tape.gradient(ag::reduce_sum(f(x0)), x0);
  ag::GradientTape eager_tape;
  eager_tape.watch(x0);
  const Tensor expected = eager_tape.gradient(ag::reduce_sum(x0 + 0.01f * lorenz96(x0)), x0);
  EXPECT_TRUE(agtest::same_tensor(expected, g, {.rtol = 1e-6, .atol = 1e-6}));
}

// Eight stages of an explicit method in a staged loop: each stage a loop nest of its own (a
// norm between stages keeps them apart), the loop's body many times kMaxNestInstructions.
Tensor stages(Tensor x, Tensor n) {
  Tensor i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   Tensor k = x;
                   for (int s = 0; s < 8; ++s) {
                     const Tensor scale = ag::rsqrt(ag::reduce_mean(ag::square(k)) + 1.0f);
                     k = ag::tanh(lorenz96(x + 0.05f * k) * scale) * (0.5f + 0.01f * static_cast<float>(s));
                   }
                   x = x + 0.01f * k;
                   i += 1;
                 },
                 ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("roll_and_stages_test.cpp", 1));
  return x;
}

TEST(JitStagedLoops, ALoopOfManyNestsGivesItsNestsToTheSecondModule) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  const Tensor x = ag::random_uniform({4096}, ag::float32, -1, 1, 5), n = ag::constant(5);
  agtest::expect_three_way("8 stages", stages, {.rtol = 1e-4, .atol = 1e-5}, x, n);
  auto f = ag::function(stages);
  const std::string ir = f.get_concrete_function(x, n).llvm_ir(true);
  const size_t header = ir.find("compiled as a second module");
  ASSERT_NE(header, std::string::npos) << "no second module";
  // Several nests outlined from inside the staged loop (the loop itself stays in the entry).
  int nests = 0;
  for (size_t at = ir.find("define void @agc_entry.nest"); at != std::string::npos; at = ir.find("define void @agc_entry.nest", at + 1))
    ++nests;
  EXPECT_GE(nests, 4) << ir.substr(header, 2000);
  // Split or whole, the same code: the same bits.
  const Tensor split = f(x, n);
  const agtest::ScopedEnv whole("AG_JIT_SPLIT", "0");
  auto g = ag::function(stages);
  EXPECT_TRUE(agtest::same_tensor(g(x, n), split, {.rtol = 0, .atol = 0}));
}

}  // namespace
