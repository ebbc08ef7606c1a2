// Inline reductions (fusion.cpp, lower_inline_reduction.cpp): a reduction over at most eight
// static elements is evaluated in the loop that reads it; a value several consumers read at the
// same index, or a cheap expansion several groups read, is fused rather than stored; a reduction
// over middle dims with a short kept suffix accumulates in registers (lower_reduce.cpp). Every
// case checks values, eager == interpreter == JIT, and the plan shows the fusion happened.
#include <limits>

#include "jit_test_util.h"

namespace {

using ag::Tensor;
using agtest::fused_plan;
using agtest::plan_line;

bool is_fused(const std::string& line) { return line.find("[fused") != std::string::npos; }

// n-body's accelerations, as bench/apps/nbody.cpp writes them.
Tensor accelerations(Tensor pos, Tensor mass) {
  const Tensor d = ag::expand_dims(pos, 0) - ag::expand_dims(pos, 1);
  const Tensor inv = ag::rsqrt(ag::reduce_sum(d * d, 2) + 0.01f);
  return ag::reduce_sum(d * ag::expand_dims(inv * inv * inv * mass, 2), 1);
}

const Tensor kPos = ag::random_uniform({40, 3}, ag::float32, -1, 1, 31);
const Tensor kMass = ag::random_uniform({40}, ag::float32, 0.5f, 1.5f, 32);

TEST(JitInlineReductions, PairwiseForcesAreTwoLoopNests) {
  agtest::expect_three_way("accelerations", accelerations, {}, kPos, kMass);
  const std::string plan = fused_plan(accelerations, {}, kPos, kMass);
  // The sum over x, y, z is computed where its rsqrt is; the differences are recomputed in both
  // loops (the [40,40,3] value is never stored), and rsqrt, read by two products, once.
  const std::string dist = plan_line(plan, "ReduceSum");
  EXPECT_TRUE(is_fused(dist)) << plan;
  EXPECT_NE(plan_line(plan, "Sub").find("group=%"), std::string::npos) << plan;
  EXPECT_NE(plan_line(plan, "Sub").find(","), std::string::npos) << plan;  // in two groups
  EXPECT_TRUE(is_fused(plan_line(plan, "Rsqrt"))) << plan;
  size_t stored = 0;
  for (size_t at = plan.find("[arena"); at != std::string::npos; at = plan.find("[arena", at + 1)) ++stored;
  EXPECT_EQ(stored, 1u) << plan;  // the [40,40] weights; the result is written in place
}

TEST(JitInlineReductions, EveryReductionKindKeepdimsAndSeveralAxes) {
  const Tensor x = ag::random_uniform({30, 2, 3}, ag::float32, -2, 2, 33);
  auto fn = [](Tensor t) {
    return std::make_tuple(ag::exp(ag::reduce_sum(t, {2})) + 1.f, ag::reduce_mean(t, {2}, true) * 2.f,
                           ag::reduce_max(t, {1, 2}) - 1.f, ag::reduce_min(t, {2}) * 3.f, ag::reduce_prod(t, {1}) + 0.5f,
                           ag::logical_not(ag::reduce_any(t > 1.5f, {2})), ag::logical_not(ag::reduce_all(t > -1.f, {1, 2})));
  };
  agtest::expect_three_way("every kind", fn, {}, x);
  const std::string plan = fused_plan(fn, {}, x);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceAny", "ReduceAll"})
    EXPECT_TRUE(is_fused(plan_line(plan, op))) << op << "\n" << plan;
}

TEST(JitInlineReductions, IntegersALeadingAxisAndAReductionReadByAnArgmin) {
  const Tensor i = ag::cast(ag::random_uniform({4, 25}, ag::float32, -50, 50, 34), ag::int32);
  const Tensor p = ag::random_uniform({200, 1, 2}, ag::float32, -3, 3, 35), c = ag::random_uniform({1, 6, 2}, ag::float32, -3, 3, 36);
  auto fn = [](Tensor a, Tensor x, Tensor y) {
    // An int32 sum and max over the leading 4 rows; the nearest of 6 centres by max-norm (the
    // sum-of-squares form is unrolled into slices by the graph pass before the JIT sees it).
    return std::make_tuple(ag::reduce_sum(a, {0}) * 2, ag::reduce_max(a, {0}) + 1,
                           ag::argmin(ag::reduce_max(ag::abs(x - y), {2}), 1));
  };
  agtest::expect_three_way("ints and argmin", fn, {}, i, p, c);
  const std::string plan = fused_plan(fn, {}, i, p, c);
  EXPECT_TRUE(is_fused(plan_line(plan, "ReduceSum"))) << plan;
  EXPECT_TRUE(is_fused(plan_line(plan, "ReduceMax"))) << plan;
  EXPECT_EQ(plan.find("[arena"), std::string::npos) << plan;  // the [200,6] distances are never stored
}

TEST(JitInlineReductions, NanAndInfinitiesPropagateAsInTheirOwnLoops) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = ag::constant({{1.f, nan, 2.f}, {inf, -inf, 0.f}, {-0.f, 0.f, -0.f}, {inf, 1.f, 2.f}});
  auto fn = [](Tensor t) {
    return std::make_tuple(ag::reduce_max(t, {1}) * 1.f, ag::reduce_min(t, {1}) + 0.f, ag::reduce_sum(t, {1}) - 1.f,
                           ag::reduce_prod(t, {1}) * 2.f);
  };
  agtest::expect_three_way("special values", fn, {}, x);
  const std::vector<float> mx = std::get<0>(ag::function(fn)(x)).to_vector<float>();
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], inf);
  EXPECT_EQ(mx[3], inf);
}

TEST(JitInlineReductions, WhatWouldBeRecomputedOrTooLongStaysAReduction) {
  const Tensor x = ag::random_uniform({40, 3}, ag::float32, -1, 1, 37), y = ag::random_uniform({40, 16}, ag::float32, -1, 1, 38);
  auto fn = [](Tensor a, Tensor b) {
    // The row sum broadcasts into a's [40,3] loop: inline, it would be summed three times.
    // b's rows have 16 elements: over kMaxInlineReduction.
    return std::make_tuple(a / ag::reduce_sum(a, {1}, true), ag::exp(ag::reduce_sum(b, {1})));
  };
  agtest::expect_three_way("kept reductions", fn, {}, x, y);
  const std::string plan = fused_plan(fn, {}, x, y);
  size_t at = plan.find("ReduceSum(");
  ASSERT_NE(at, std::string::npos) << plan;
  EXPECT_FALSE(is_fused(plan.substr(at, plan.find('\n', at) - at))) << plan;
  at = plan.find("ReduceSum(", at + 1);
  ASSERT_NE(at, std::string::npos) << plan;
  EXPECT_FALSE(is_fused(plan.substr(at, plan.find('\n', at) - at))) << plan;
}

TEST(JitInlineReductions, NoInlineReductionInsideAnother) {
  // max over 4 of (sum over 3): the outer is inline in the add's loop, the inner is stored.
  auto fn = [](Tensor t) { return ag::reduce_max(ag::reduce_sum(t * t, {2}), {1}) + 1.f; };
  const Tensor x = ag::random_uniform({20, 4, 3}, ag::float32, -1, 1, 39);
  agtest::expect_three_way("nested", fn, {}, x);
  const std::string plan = fused_plan(fn, {}, x);
  EXPECT_TRUE(is_fused(plan_line(plan, "ReduceMax"))) << plan;
  EXPECT_FALSE(is_fused(plan_line(plan, "ReduceSum"))) << plan;
}

TEST(JitInlineReductions, InAStagedLoopUnderATapeAndNested) {
  // Leapfrog steps in a staged loop; the gradient of the final kinetic energy with respect to
  // the masses, taken with a tape inside the trace; and the accelerations as a nested Function.
  auto nested = ag::function(accelerations);
  auto fn = [nested](Tensor pos, Tensor mass, Tensor steps) mutable {
    ag::GradientTape tape;
    tape.watch(mass);
    Tensor vel = ag::zeros_like(pos), i = 0;
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     vel = vel + nested(pos, mass) * 0.01f;
                     pos = pos + vel * 0.01f;
                     i += 1;
                   },
                   ag::state(i, pos, vel), {"i", "pos", "vel"}, AG_SOURCE_LOC("inline_reductions_test.cpp", 1));
    const Tensor energy = ag::reduce_sum(ag::reduce_sum(vel * vel, {1}) * mass);
    return std::make_tuple(pos, tape.gradient(energy, {mass})[0]);
  };
  agtest::expect_three_way("staged, taped, nested", fn, {1e-4, 1e-3}, kPos, kMass, Tensor(3));
  // A tape outside the compiled call.
  auto compiled = ag::function(accelerations);
  ag::GradientTape outer;
  outer.watch(kPos);
  const Tensor a = compiled(kPos, kMass);
  const Tensor g = outer.gradient(ag::reduce_sum(a * a), {kPos})[0];
  ag::GradientTape eager_tape;
  eager_tape.watch(kPos);
  const Tensor ea = accelerations(kPos, kMass);
  EXPECT_TRUE(agtest::same_tensor(eager_tape.gradient(ag::reduce_sum(ea * ea), {kPos})[0], g, {1e-4, 1e-3}));
}

TEST(JitInlineReductions, MiddleAxisSumsKeepAShortSuffixInRegisters) {
  const Tensor x = ag::random_uniform({16, 50, 3}, ag::float32, -1, 1, 40);
  const Tensor n = ag::cast(ag::random_uniform({6, 7, 2, 4}, ag::float32, -9, 9, 41), ag::int64);
  auto fn = [](Tensor a, Tensor b) {
    return std::make_tuple(ag::reduce_sum(a * 2.f, {1}), ag::reduce_mean(a, {1}), ag::reduce_sum(b, {1, 2}),
                           ag::reduce_prod(b, {0}));
  };
  agtest::expect_three_way("middle axes", fn, {}, x, n);
}

}  // namespace
