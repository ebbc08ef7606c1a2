// unroll_short_reductions in compiled code: a sum or mean over one short static axis of an
// expression becomes an elementwise sum of slices that its consumer computes in its own loop
// (k-means' nearest centroid: the distances are never stored). Every case checks values:
// eager == interpreter == JIT, also with NaN and infinities, under a tape, in a staged loop.
#include <limits>

#include "jit_test_util.h"

namespace {

using ag::Tensor;
using agtest::fused_plan;
using agtest::plan_line;

Tensor nearest(Tensor x, Tensor c) {
  return ag::argmin(ag::reduce_sum(ag::square(ag::expand_dims(x, 1) - ag::expand_dims(c, 0)), 2), 1);
}

const Tensor kPoints = ag::random_uniform({500, 2}, ag::float32, -3, 3, 21);
const Tensor kCentroids = ag::random_uniform({8, 2}, ag::float32, -3, 3, 22);

TEST(JitShortReductions, NearestCentroidComputesDistancesInsideTheArgmin) {
  agtest::expect_three_way("nearest centroid", nearest, {}, kPoints, kCentroids);
  const std::string plan = fused_plan(nearest, {}, kPoints, kCentroids);
  EXPECT_EQ(plan.find("ReduceSum"), std::string::npos) << plan;
  const std::string add = plan_line(plan, "Add");
  EXPECT_NE(add.find("[fused"), std::string::npos) << plan;
  // The operands are read in place: every slice is a view, nothing but the argmin is stored.
  EXPECT_EQ(plan.find("[arena"), std::string::npos) << plan;
  EXPECT_NE(plan_line(plan, "Slice").find("[view of"), std::string::npos) << plan;
}

TEST(JitShortReductions, MeanKeepdimsAndALeadingAxis) {
  // A mean over axis 0 (3 rows) with keepdims, of an expression with a broadcast operand.
  auto fn = [](Tensor x, Tensor y) { return ag::reduce_mean(ag::exp(x) * y, {0}, true) + 1.f; };
  const Tensor x = ag::random_uniform({3, 1}, ag::float32, -1, 1, 23), y = ag::random_uniform({7}, ag::float32, 0, 2, 24);
  agtest::expect_three_way("mean keepdims", fn, {}, x, y);
  EXPECT_EQ(fused_plan(fn, {}, x, y).find("ReduceMean"), std::string::npos);
}

TEST(JitShortReductions, NanAndInfinitiesAsAReductionGivesThem) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = ag::constant({{1.f, inf}, {-inf, inf}, {nan, 2.f}, {3.f, 4.f}});
  // [1,4,2] * [3,1,1]: every row of x times 1, 2 and 3, summed over the last axis.
  auto fn = [](Tensor t) { return ag::reduce_sum(ag::expand_dims(t, 0) * ag::reshape(ag::constant({1.f, 2.f, 3.f}), {3, 1, 1}), 2); };
  agtest::expect_three_way("special values", fn, {}, x);
  EXPECT_EQ(fused_plan(fn, {}, x).find("ReduceSum"), std::string::npos);
  const std::vector<float> got = ag::function(fn)(x).to_vector<float>();
  EXPECT_EQ(got[0], inf);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[3], 7.f);
  EXPECT_EQ(got[11], 21.f);
}

TEST(JitShortReductions, LongAxesIntegersAndPlainOperandsStayReductions) {
  auto fn = [](Tensor a, Tensor b, Tensor i) {
    // (b * b: an operand as large as the expression, read anyway: slicing it would make the reads strided.)
    return std::make_tuple(ag::reduce_sum(ag::exp(a), 1), ag::reduce_sum(b * b, 1), ag::reduce_sum(i * 2, 1));
  };
  const Tensor a = ag::random_uniform({4, 16}, ag::float32, -1, 1, 25), b = ag::random_uniform({4, 2}, ag::float32, -1, 1, 26);
  const Tensor i = ag::constant({{1, 2}, {3, 4}});
  agtest::expect_three_way("kept", fn, {}, a, b, i);
  const std::string plan = fused_plan(fn, {}, a, b, i);
  size_t reductions = 0;
  for (size_t at = plan.find("ReduceSum("); at != std::string::npos; at = plan.find("ReduceSum(", at + 1)) ++reductions;
  EXPECT_EQ(reductions, 3u) << plan;
}

TEST(JitShortReductions, GradientsAndAStagedLoop) {
  // d/dx and d/dc of sum over points of the distance to c, eagerly, traced and compiled.
  auto grads = [](Tensor x, Tensor c) {
    ag::GradientTape tape;
    tape.watch(x);
    tape.watch(c);
    const Tensor d = ag::reduce_sum(ag::square(x - c), 1);
    const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(ag::sqrt(d + 1.f)), {x, c});
    return std::make_tuple(g[0], g[1]);
  };
  agtest::expect_three_way("gradients", grads, {}, kPoints, ag::constant({0.5f, -0.5f}));
  // Three k-means steps in a staged loop.
  auto steps = [](Tensor x, Tensor c, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     const Tensor k = ag::cast(nearest(x, c), ag::int32);
                     const Tensor counts = ag::unsorted_segment_sum(ag::ones_like(k), k, 8);
                     c = ag::unsorted_segment_sum(x, k, 8) / ag::expand_dims(ag::maximum(ag::cast(counts, ag::float32), 1.f), 1);
                     i += 1;
                   },
                   ag::state(i, c), {"i", "c"}, AG_SOURCE_LOC("short_reductions_test.cpp", 1));
    return c;
  };
  agtest::expect_three_way("k-means steps", steps, {}, kPoints, kCentroids, Tensor(3));
}

TEST(JitShortReductions, TwoResultsOfOneLoopAreTwoOperands) {
  // Both operands are outputs of one staged loop (one node, two results): each keeps its own
  // slices.
  auto fn = [](Tensor a, Tensor b, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     a = a * 0.5f + b;
                     b = b - 1.f;
                     i += 1;
                   },
                   ag::state(i, a, b), {"i", "a", "b"}, AG_SOURCE_LOC("short_reductions_test.cpp", 2));
    return ag::reduce_sum(ag::expand_dims(a, 1) * 3.f - ag::expand_dims(b, 0), 2);  // [5,5] from [5,1,3] and [1,5,3]
  };
  const Tensor a = ag::random_uniform({5, 3}, ag::float32, -1, 1, 27), b = ag::random_uniform({5, 3}, ag::float32, -1, 1, 28);
  agtest::expect_three_way("two loop results", fn, {}, a, b, Tensor(2));
}

}  // namespace
