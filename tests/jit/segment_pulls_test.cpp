// Segment sums of a staged loop whose ids stay the same through it are pulled by segment
// (segment_pulls.h): the edges ordered once before the loop, each iteration's segments computed
// from their edges in edge order, split over threads by chunks of segments. The same additions in
// the same order as the push, so eager == interpreter == JIT bit for bit, on one thread and two;
// checked with float32/float64/int32 data, int32/int64 ids, negative ids (dropped), rows of
// one, three, sixteen and 256 elements, a weight per edge, a segment max with NaNs, skewed ids
// (the edges ordered in parts on two threads), under tapes inside
// the trace, in a nested Function; an id or a gathered index out of range raises the eager op's
// error, and a loop of no iteration raises none. The plan dump, the compile log and the order
// counter show that the pull ran; AG_JIT_PULL_SEGMENTS=0 pushes with the same bits.
#include <cmath>
#include <limits>
#include <string>

#include "../common/log_capture.h"
#include "ag/detail/parallel.h"
#include "../common/scoped_env.h"
#include "jit_test_util.h"
#include "segment_pulls.h"

namespace {

using ag::Tensor;
using Threads = ag::detail::ScopedNumThreads;

#define LOC(line) AG_SOURCE_LOC("segment_pulls_test.cpp", line)

const agtest::Tol kExact{.rtol = 0, .atol = 0};

// `steps` rounds of x <- x * decay + segment_sum(gather(x * w, src), dst): PageRank's shape,
// with a gathered operand that changes every iteration and ids and indices that do not.
Tensor propagate_by(Tensor x, Tensor w, Tensor src, Tensor dst, Tensor steps, Tensor decay) {
  const int64_t n = x.shape()[0];
  Tensor i = 0;
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   x = x * decay + ag::unsorted_segment_sum(ag::gather(x * w, src), dst, n);
                   i += 1;
                 },
                 ag::state(x, i), {"x", "i"}, LOC(1));
  return x;
}
Tensor propagate(Tensor x, Tensor w, Tensor src, Tensor dst, Tensor steps) {
  return propagate_by(x, w, src, dst, steps, ag::cast(ag::constant(0.5), x.dtype()));
}

// The same with a segment max, and rows: x [n, width].
Tensor propagate_max(Tensor x, Tensor src, Tensor dst, Tensor steps) {
  const int64_t n = x.shape()[0];
  Tensor i = 0;
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   x = ag::maximum(x * 0.5, ag::unsorted_segment_max(ag::gather(x, src) - 1.0f, dst, n));
                   i += 1;
                 },
                 ag::state(x, i), {"x", "i"}, LOC(2));
  return x;
}

struct Edges {
  Tensor src, dst;
};

// `edges` edges over `n` nodes, targets skewed toward low ids (a few collect many, as on the
// web); `dropped` of them with a negative target.
Edges edges_of(int64_t n, int64_t edges, ag::DType ids, int64_t dropped = 0, uint64_t seed = 5) {
  const Tensor u = ag::random_uniform({edges}, ag::float64, 0, 1, seed);
  Tensor dst = ag::minimum(ag::cast(u * u * u * static_cast<double>(n), ag::int64), n - 1);
  if (dropped > 0) dst = ag::where(ag::range(int64_t{0}, edges) % (edges / dropped) == 0, ag::constant(int64_t{-1}), dst);
  const Tensor src = ag::cast(ag::random_uniform({edges}, ag::float64, 0, static_cast<double>(n), seed + 1), ag::int64);
  return {ag::cast(src, ids), ag::cast(dst, ids)};
}

Tensor data(ag::DType d, ag::Shape shape, uint64_t seed) {
  if (d == ag::int32) return ag::cast(ag::random_uniform(shape, ag::float32, -50, 50, seed), ag::int32);
  return ag::cast(ag::random_uniform(shape, ag::float32, 0, 1, seed), d);
}

int64_t orders_of_a_call(auto& f, const auto&... args) {
  const int64_t before = ag::jit::segment_orders_built();
  (void)f(args...);
  return ag::jit::segment_orders_built() - before;
}

TEST(SegmentPulls, APageRankStepPullsBySegmentWithTheEagerBits) {
  const Tensor steps = ag::constant(int32_t{4});
  for (ag::DType d : {ag::float32, ag::float64, ag::int32})
    for (ag::DType ids : {ag::int32, ag::int64})
      for (int threads : {1, 2}) {
        Threads t(threads);
        const std::string what = fmt::format("{} data, {} ids, {} threads", ag::dtype_name(d), ag::dtype_name(ids), threads);
        const int64_t n = 20000;
        const Edges e = edges_of(n, 150000, ids, /*dropped=*/1000);
        const Tensor x = data(d, {n}, 7), w = d == ag::int32 ? ag::ones({n}, d) : data(d, {n}, 8) * 0.1;
        const Tensor decay = ag::cast(ag::constant(d == ag::int32 ? 1.0 : 0.5), d);  // integers wrap, as eagerly
        agtest::expect_three_way(what, propagate_by, kExact, x, w, e.src, e.dst, steps, decay);
        auto f = ag::function(propagate_by);
        EXPECT_EQ(orders_of_a_call(f, x, w, e.src, e.dst, steps, decay), 1) << what << ": one order per loop, not per iteration";
      }
}

TEST(SegmentPulls, RowsOfOneThreeSixteenAnd256ElementsAndASegmentMaxWithNaNs) {
  const Tensor steps = ag::constant(int32_t{3});
  for (int64_t width : {1, 3, 16, 256})
    for (int threads : {1, 2}) {
      Threads t(threads);
      const std::string what = fmt::format("rows of {}, {} threads", width, threads);
      const int64_t n = 5000;
      const Edges e = edges_of(n, 40000, ag::int32, 100, 9);
      Tensor x = data(ag::float32, {n, width}, 10);
      auto rows = [](Tensor v, Tensor w, Tensor src, Tensor dst, Tensor k) { return propagate(v, w, src, dst, k); };
      agtest::expect_three_way(what, rows, kExact, x, ag::constant(0.125f), e.src, e.dst, steps);
      // A NaN in a few rows: the max propagates it as the eager kernel does.
      x = ag::where(ag::reshape(ag::range(int64_t{0}, n) % 997 == 0, {n, 1}), ag::constant(std::numeric_limits<float>::quiet_NaN()), x);
      agtest::expect_three_way(what + ", max", propagate_max, kExact, x, e.src, e.dst, steps);
      auto f = ag::function(propagate_max);
      EXPECT_EQ(orders_of_a_call(f, x, e.src, e.dst, steps), 1) << what;
    }
}

// A weight per edge, read at the edge's own row (the order then records each edge), beside the
// gathered value; rows of 16 with a weight per edge and per row element.
TEST(SegmentPulls, AnEdgeWeightIsReadAtItsEdge) {
  auto weighted = [](Tensor x, Tensor weight, Tensor src, Tensor dst, Tensor steps) {
    const int64_t n = x.shape()[0];
    Tensor i = 0;
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     x = x * 0.5f + ag::unsorted_segment_sum(ag::gather(x, src) * weight, dst, n);
                     i += 1;
                   },
                   ag::state(x, i), {"x", "i"}, LOC(4));
    return x;
  };
  const Tensor steps = ag::constant(int32_t{3});
  for (int threads : {1, 2}) {
    Threads t(threads);
    const Edges e = edges_of(20000, 150000, ag::int64, 50, 19);
    const Tensor x = data(ag::float32, {20000}, 20), weight = data(ag::float32, {150000}, 21);
    agtest::expect_three_way(fmt::format("a weight per edge, {} threads", threads), weighted, kExact, x, weight, e.src, e.dst, steps);
    const Tensor rows = data(ag::float32, {20000, 16}, 22), weights = data(ag::float32, {150000, 16}, 23);
    agtest::expect_three_way(fmt::format("rows of 16, a weight per element, {} threads", threads), weighted, kExact, rows, weights,
                             e.src, e.dst, steps);
    auto f = ag::function(weighted);
    EXPECT_EQ(orders_of_a_call(f, x, weight, e.src, e.dst, steps), 1);
    EXPECT_EQ(orders_of_a_call(f, rows, weights, e.src, e.dst, steps), 1);
  }
}

// A staged loop inside a staged loop whose ids change every outer round: the inner loop's edges
// are ordered again before it, in every round (the outer loop's own segment sum, whose gather
// reads indices the loop changes, pushes).
TEST(SegmentPulls, AnInnerLoopReordersWhenTheOuterLoopChangesItsIds) {
  auto rounds = [](Tensor x, Tensor w, Tensor src, Tensor dst, Tensor outer, Tensor inner) {
    const int64_t n = x.shape()[0];
    Tensor r = 0;
    ag::while_stmt([&] { return r < outer; },
                   [&] {
                     x = propagate(x, w, src, dst, inner) * 0.25 + ag::unsorted_segment_sum(ag::gather(x, dst), src, n) * 0.001;
                     dst = (dst + 7) % static_cast<int32_t>(n);
                     r += 1;
                   },
                   ag::state(x, dst, r), {"x", "dst", "r"}, LOC(6));
    return x;
  };
  const int64_t n = 20000;
  const Edges e = edges_of(n, 150000, ag::int32);
  const Tensor x = data(ag::float64, {n}, 25), w = data(ag::float64, {n}, 26) * 0.1;
  const Tensor outer = ag::constant(int32_t{3}), inner = ag::constant(int32_t{2});
  for (int threads : {1, 2}) {
    Threads t(threads);
    agtest::expect_three_way(fmt::format("nested loops, {} threads", threads), rounds, kExact, x, w, e.src, e.dst, outer, inner);
  }
  auto f = ag::function(rounds);
  EXPECT_EQ(orders_of_a_call(f, x, w, e.src, e.dst, outer, inner), 3) << "the inner loop's order, once per round";
}

TEST(SegmentPulls, ThePlanTheLogAndTheSettingShowThePull) {
  const int64_t n = 20000;
  const Edges e = edges_of(n, 150000, ag::int32);
  const Tensor x = data(ag::float64, {n}, 11), w = data(ag::float64, {n}, 12) * 0.1, steps = ag::constant(int32_t{2});
  const std::string plan = agtest::fused_plan(propagate, {}, x, w, e.src, e.dst, steps);
  EXPECT_EQ(agtest::occurrences(plan, "pulled by segment"), 1) << plan;
  {
    const agtest::LogCapture log(ag::detail::LogTopic::Compile);
    auto f = ag::function(propagate);
    (void)f(x, w, e.src, e.dst, steps);
    EXPECT_EQ(agtest::occurrences(log.text(), "1 segment sum pulled by segment"), 1) << log.text();
  }
  const Tensor pulled = ag::function(propagate)(x, w, e.src, e.dst, steps);
  const agtest::ScopedEnv off("AG_JIT_PULL_SEGMENTS", "0");
  EXPECT_EQ(agtest::occurrences(agtest::fused_plan(propagate, {}, x, w, e.src, e.dst, steps), "pulled by segment"), 0);
  auto pushed = ag::function(propagate);
  EXPECT_EQ(orders_of_a_call(pushed, x, w, e.src, e.dst, steps), 0);
  EXPECT_TRUE(agtest::same_tensor(pulled, pushed(x, w, e.src, e.dst, steps), kExact));
}

// Ids that change in the loop, and a loop too small to order: pushed, no order.
TEST(SegmentPulls, IdsTheLoopChangesAndSmallSumsArePushed) {
  auto moving = [](Tensor x, Tensor src, Tensor dst, Tensor steps) {
    const int64_t n = x.shape()[0];
    Tensor i = 0;
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     x = x * 0.5f + ag::unsorted_segment_sum(ag::gather(x, src), dst, n);
                     dst = (dst + 1) % static_cast<int32_t>(n);
                     i += 1;
                   },
                   ag::state(x, dst, i), {"x", "dst", "i"}, LOC(3));
    return x;
  };
  const Edges e = edges_of(20000, 150000, ag::int32);
  const Tensor x = data(ag::float32, {20000}, 13), steps = ag::constant(int32_t{3});
  agtest::expect_three_way("moving ids", moving, kExact, x, e.src, e.dst, steps);
  auto f = ag::function(moving);
  EXPECT_EQ(orders_of_a_call(f, x, e.src, e.dst, steps), 0);
  const Edges few = edges_of(100, 1000, ag::int32);
  const Tensor small = data(ag::float32, {100}, 14);
  auto g = ag::function(propagate);
  agtest::expect_three_way("1000 edges", propagate, kExact, small, small, few.src, few.dst, steps);
  EXPECT_EQ(orders_of_a_call(g, small, small, few.src, few.dst, steps), 0);
}

// The message of the InvalidArgumentError that fn(args...) raises ("" when none is raised).
std::string error_of(auto&& fn, const auto&... args) {
  try {
    (void)fn(args...);
  } catch (const ag::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

// Two gathers: x[src] * w[src2]. The error is the push's (the eager op's), word for word: row by
// row each gather's index, then the id; at the first bad id every gather's indices in full, in
// order, before the id's own error.
Tensor two_gathers(Tensor x, Tensor w, Tensor src, Tensor src2, Tensor dst, Tensor steps) {
  const int64_t n = x.shape()[0];
  Tensor i = 0;
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   x = x * 0.5f + ag::unsorted_segment_sum(ag::gather(x, src) * ag::gather(w, src2), dst, n);
                   i += 1;
                 },
                 ag::state(x, i), {"x", "i"}, LOC(5));
  return x;
}

TEST(SegmentPulls, AnIdOrIndexOutOfRangeRaisesTheEagerErrorAndALoopOfNoIterationNone) {
  const int64_t n = 20000, edges = 150000;
  const Edges e = edges_of(n, edges, ag::int32);
  const Tensor src2 = ag::cast(ag::random_uniform({edges}, ag::float64, 0, static_cast<double>(n), 24), ag::int32);
  const Tensor x = data(ag::float32, {n}, 15), w = data(ag::float32, {n}, 16), steps = ag::constant(int32_t{3});
  const Tensor rows = ag::range(int32_t{0}, static_cast<int32_t>(edges));
  auto bad_at = [&](const Tensor& v, int32_t row, int32_t value) { return ag::where(rows == row, ag::constant(value), v); };
  const Tensor far = bad_at(e.dst, 77777, static_cast<int32_t>(n + 5)), far_early = bad_at(e.dst, 10, static_cast<int32_t>(n + 7));
  struct Case {
    const char* what;
    Tensor src, src2, dst;
    const char* needle;
  };
  const Case cases[] = {
      {"an id out of range", e.src, src2, far, "20005"},
      {"an index of the first gather", bad_at(e.src, 3, -4), src2, e.dst, "-4"},
      {"an index of the second gather, before a bad id", e.src, bad_at(src2, 50, 20009), far, "20009"},
      {"an index of the second gather, after a bad id", e.src, bad_at(src2, 90000, 20011), far_early, "20011"},
      {"an index of each gather, after a bad id", bad_at(e.src, 120000, -6), bad_at(src2, 90000, 20011), far_early, "-6"},
  };
  auto f = ag::function(two_gathers);
  for (const Case& c : cases) {
    const std::string eager = error_of(two_gathers, x, w, c.src, c.src2, c.dst, steps);
    ASSERT_NE(eager.find(c.needle), std::string::npos) << c.what << ": " << eager;
    EXPECT_EQ(error_of(f, x, w, c.src, c.src2, c.dst, steps), eager) << c.what;
    const agtest::ScopedEnv off("AG_JIT_PULL_SEGMENTS", "0");
    EXPECT_EQ(error_of(ag::function(two_gathers), x, w, c.src, c.src2, c.dst, steps), eager) << c.what << ", pushed";
  }
  // No iteration: nothing is read, nothing raised (as eagerly), and the state comes back.
  const Tensor none = ag::constant(int32_t{0});
  agtest::expect_three_way("no iteration, an id out of range", two_gathers, kExact, x, w, e.src, src2, far, none);
  // The Function still pulls on good data afterwards.
  agtest::expect_same(two_gathers(x, w, e.src, src2, e.dst, steps), f(x, w, e.src, src2, e.dst, steps), kExact, "good data after bad");
  EXPECT_EQ(orders_of_a_call(f, x, w, e.src, src2, e.dst, steps), 1);
}

// Under a tape inside the trace: the gradient of a loss after the loop by the weights; and the
// loop inside a nested Function, called twice with one tensor as two arguments.
TEST(SegmentPulls, UnderATapeInsideTheTraceAndInANestedFunction) {
  const int64_t n = 20000;
  const Edges e = edges_of(n, 150000, ag::int32);
  const Tensor x = data(ag::float64, {n}, 17), w = data(ag::float64, {n}, 18) * 0.1, steps = ag::constant(int32_t{3});
  auto with_gradient = [](Tensor v, Tensor weights, Tensor src, Tensor dst, Tensor k) {
    ag::GradientTape tape;
    tape.watch(weights);
    const Tensor y = propagate(v, weights, src, dst, k);
    const Tensor loss = ag::reduce_sum(y * y);
    return std::tuple{y, tape.gradient(loss, weights)};
  };
  for (int threads : {1, 2}) {
    Threads t(threads);
    agtest::expect_three_way(fmt::format("under a tape, {} threads", threads), with_gradient, {.rtol = 1e-12, .atol = 1e-15}, x, w,
                             e.src, e.dst, steps);
  }
  auto inner = ag::function(propagate);
  auto outer = [&inner](Tensor v, Tensor src, Tensor dst, Tensor k) { return inner(v, v * 0.1, src, dst, k) + inner(v, v * 0.2, src, dst, k); };
  agtest::expect_three_way("nested, x as value and weights", outer, kExact, x, e.src, e.dst, steps);
}

}  // namespace
