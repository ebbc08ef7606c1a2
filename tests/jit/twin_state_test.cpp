// A While's static state in two buffers used in turn, and slice updates computed straight into
// their result (plan_updates.h): the body writes its next state into the buffer the current one is
// not in, a stencil's new interior goes into that buffer's box and only the border is copied.
// Each case three-way (eager == interpreter == JIT) with odd, even and zero trip counts (the state
// ends in either buffer, or never leaves the first), and its plan checked: the fast path ran.
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Slice;
using ag::Tensor;
using agtest::sample;
using agtest::Values;

const agtest::Tol kTol{.rtol = 1e-5, .atol = 1e-5};

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// How many loop states a plan double-buffers ("[reg, dest 0 twin, arena twin]": two).
size_t twins(const std::string& plan) { return count(plan, " twin]") + count(plan, " twin,"); }

// x <- tanh(x) * 1.5 + 0.25, n times: the body's result is a fresh buffer each iteration.
Tensor damped(Tensor x, Tensor n) {
  auto [i, y] = ag::while_loop([&](const Tensor& i, const Tensor&) { return i < n; },
                               [](const Tensor& i, const Tensor& y) { return std::make_tuple(i + 1, ag::tanh(y) * 1.5f + 0.25f); },
                               std::make_tuple(ag::constant(0), x));
  return y;
}

TEST(JitTwinState, AFreshResultAlternatesBetweenTheLoopsTwoBuffers) {
  const Tensor x = sample(ag::float32, {6, 5}, 1, Values::Moderate);
  for (int n : {0, 1, 2, 5}) agtest::expect_three_way("damped, " + std::to_string(n), damped, kTol, x, ag::constant(n));
  const std::string plan = agtest::fused_plan(damped, {}, x, ag::constant(3));
  EXPECT_EQ(twins(agtest::plan_line(plan, "While")), 1u) << plan;
  EXPECT_TRUE(has(plan, "f32[6,5]  [dest 1")) << plan;  // the body's result: into the loop's other buffer
  // One-element state stays in registers; a state of run-time size in owned buffers.
  const ag::FunctionOptions dynamic{.input_signature = {ag::TensorSpec({-1, 5}, ag::float32), ag::TensorSpec({}, ag::int32)}};
  agtest::expect_three_way_with("damped, dynamic dims", damped, dynamic, kTol, x, ag::constant(3));
  EXPECT_EQ(twins(agtest::fused_plan(damped, dynamic, x, ag::constant(3))), 0u);
}

TEST(JitTwinState, SwappedAndRetainedStatesKeepTheirValues) {
  // (a, b) <- (b, a + b): a takes b's old buffer's value, b a fresh one.
  auto fibonacci = [](Tensor a, Tensor b, Tensor n) {
    auto [i, x, y] = ag::while_loop([&](const Tensor& i, const Tensor&, const Tensor&) { return i < n; },
                                    [](const Tensor& i, const Tensor& x, const Tensor& y) { return std::make_tuple(i + 1, y, x + y); },
                                    std::make_tuple(ag::constant(0), a, b));
    return std::make_tuple(x, y);
  };
  // (u, previous) <- (step(u), u): the retained value is the state the step read.
  auto with_previous = [](Tensor u, Tensor n) {
    auto [i, now, before] = ag::while_loop(
        [&](const Tensor& i, const Tensor&, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& u, const Tensor&) {
          const Tensor next = u.at(Slice{1, -1}).set(u(Slice{ag::none, -2}) * 0.5f + u(Slice{2}) * 0.5f);
          return std::make_tuple(i + 1, next, u);
        },
        std::make_tuple(ag::constant(0), u, ag::zeros_like(u)));
    return std::make_tuple(now, before);
  };
  // (a, b) <- (2b, a + 1): both fresh, each reading the other's current buffer.
  auto crossed = [](Tensor a, Tensor b, Tensor n) {
    auto [i, x, y] = ag::while_loop(
        [&](const Tensor& i, const Tensor&, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& x, const Tensor& y) { return std::make_tuple(i + 1, y * 2.0f, x + 1.0f); },
        std::make_tuple(ag::constant(0), a, b));
    return std::make_tuple(x, y);
  };
  const Tensor a = sample(ag::float32, {4, 8}, 2, Values::Moderate), b = sample(ag::float32, {4, 8}, 3, Values::Moderate);
  const Tensor u = sample(ag::float32, {33}, 4, Values::Moderate);
  for (int n : {0, 1, 4, 7}) {
    const std::string tag = std::to_string(n);
    agtest::expect_three_way("fibonacci, " + tag, fibonacci, kTol, a, b, ag::constant(n));
    agtest::expect_three_way("with previous, " + tag, with_previous, kTol, u, ag::constant(n));
    agtest::expect_three_way("crossed, " + tag, crossed, kTol, a, b, ag::constant(n));
  }
  // The same tensor passed twice: two states that start in one caller buffer.
  agtest::expect_three_way("fibonacci, one tensor twice", fibonacci, kTol, a, a, ag::constant(5));
  agtest::expect_three_way("crossed, one tensor twice", crossed, kTol, a, a, ag::constant(5));
  EXPECT_EQ(twins(agtest::plan_line(agtest::fused_plan(with_previous, {}, u, ag::constant(2)), "While")), 1u);
  const std::string plan = agtest::fused_plan(crossed, {}, a, b, ag::constant(2));
  EXPECT_EQ(twins(agtest::plan_line(plan, "While")), 2u) << plan;
}

TEST(JitTwinState, NestedLoopsAndBranchesDeliverIntoTheOtherBuffer) {
  // An inner loop whose output is the outer body's result, and a branch choosing the next state.
  auto nested = [](Tensor x, Tensor n) {
    auto [i, y] = ag::while_loop(
        [&](const Tensor& i, const Tensor&) { return i < n; },
        [&](const Tensor& i, const Tensor& y) {
          const Tensor inner = damped(y * 0.5f, n);
          const Tensor next = ag::cond(ag::reduce_sum(inner) > 0.0f, [&] { return inner - 1.0f; }, [&] { return inner * 2.0f; });
          return std::make_tuple(i + 1, next);
        },
        std::make_tuple(ag::constant(0), x));
    return y;
  };
  const Tensor x = sample(ag::float32, {3, 7}, 5, Values::Moderate);
  for (int n : {0, 1, 3}) agtest::expect_three_way("nested, " + std::to_string(n), nested, kTol, x, ag::constant(n));
  const std::string plan = agtest::fused_plan(nested, {}, x, ag::constant(2));
  EXPECT_EQ(twins(plan), 2u) << plan;  // the outer loop's and the inner loop's state
}

// Two 1-D grids, each updated from both: u' = u.at[1:-1].set(u[1:-1] + v[:-2] * c), v' likewise.
Tensor coupled(Tensor u, Tensor v, Tensor n) {
  auto [i, p, q] = ag::while_loop(
      [&](const Tensor& i, const Tensor&, const Tensor&) { return i < n; },
      [](const Tensor& i, const Tensor& p, const Tensor& q) {
        const Tensor p2 = p.at(Slice{1, -1}).set(p(Slice{1, -1}) + q(Slice{ag::none, -2}) * 0.25f);
        const Tensor q2 = q.at(Slice{1, -1}).set(q(Slice{2}) - p(Slice{1, -1}) * 0.25f);
        return std::make_tuple(i + 1, p2, q2);
      },
      std::make_tuple(ag::constant(0), u, v));
  return p * q;
}

TEST(JitTwinState, StencilUpdatesOfTwoGridsUnderATapeAndWithOneTensorTwice) {
  const Tensor u = sample(ag::float32, {40}, 6, Values::Moderate), v = sample(ag::float32, {40}, 7, Values::Moderate);
  for (int n : {0, 1, 6}) agtest::expect_three_way("coupled, " + std::to_string(n), coupled, kTol, u, v, ag::constant(n));
  agtest::expect_three_way("coupled, one tensor twice", coupled, kTol, u, u, ag::constant(5));
  const std::string plan = agtest::fused_plan(coupled, {}, u, v, ag::constant(2));
  EXPECT_EQ(count(plan, "[box of %"), 2u) << plan;
  EXPECT_EQ(twins(plan), 2u) << plan;
  // Gradients: a tape outside the Function call, and one inside the trace.
  const Tensor n = ag::constant(4);
  auto outside = [&](auto&& f, const Tensor& a, const Tensor& b) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(a);
    tape.watch(b);
    const Tensor loss = ag::reduce_sum(ag::square(f(a, b, n)));
    return std::make_tuple(loss, tape.gradient(loss, a), tape.gradient(loss, b));
  };
  auto jit = ag::function(coupled);
  agtest::expect_same(outside(coupled, u, v), outside(jit, u, v), {.rtol = 1e-4, .atol = 1e-5}, "tape outside");
  agtest::expect_same(outside(coupled, u, u), outside(jit, u, u), {.rtol = 1e-4, .atol = 1e-5}, "tape outside, one tensor twice");
  auto inside = [](Tensor a, Tensor b, Tensor n) {
    ag::GradientTape tape;
    tape.watch(a);
    const Tensor loss = ag::reduce_sum(ag::square(coupled(a, b, n)));
    return std::make_tuple(loss, tape.gradient(loss, a));
  };
  for (int k : {0, 3}) agtest::expect_three_way("tape inside, " + std::to_string(k), inside, {.rtol = 1e-4, .atol = 1e-5}, u, v, ag::constant(k));
}

TEST(JitTwinState, AStencilLargeEnoughToSplitOverThePoolWritesTheOtherBuffer) {
  // 600 x 600: the interior's loop is split over two threads (the pool's grain is 2^17), each
  // chunk writing its rows of the free buffer's box while reading the current one.
  const ag::detail::ScopedNumThreads two(2);
  auto heat = [](Tensor u, Tensor n) {
    auto [i, grid] = ag::while_loop(
        [&](const Tensor& i, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& g) {
          const Tensor center = g(Slice{1, -1}, Slice{1, -1});
          const Tensor lap = g(Slice{ag::none, -2}, Slice{1, -1}) + g(Slice{2}, Slice{1, -1}) + g(Slice{1, -1}, Slice{ag::none, -2}) +
                             g(Slice{1, -1}, Slice{2}) - center * 4.0f;
          return std::make_tuple(i + 1, g.at(Slice{1, -1}, Slice{1, -1}).set(center + lap * 0.2f));
        },
        std::make_tuple(ag::constant(0), u));
    return grid;
  };
  const Tensor u = sample(ag::float32, {600, 600}, 11, Values::Moderate);
  for (int n : {2, 3}) agtest::expect_three_way("600 x 600, " + std::to_string(n) + " steps", heat, kTol, u, ag::constant(n));
  const std::string plan = agtest::fused_plan(heat, {}, u, ag::constant(2));
  EXPECT_EQ(count(plan, "[box of %"), 1u) << plan;
  EXPECT_EQ(twins(plan), 1u) << plan;
  auto f = ag::function(heat);
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(u, ag::constant(2)).llvm_ir(true), "agc_rt_parallel_for"));
}

// A stencil's border is the same in both buffers after the first iteration, which copies it
// into the free one (the second writes the planned buffer, which holds the initial value): it is
// copied then only (lower_layout.cpp, outside_kept), not every step. One Function called again
// with another border; a base that is not the state itself (its border changes every step: the
// plan updates it in place, no twin) and one that is the other state (they swap: a copy every
// step, which the IR shows) keep their copies.
TEST(JitTwinState, AStencilsBorderIsCopiedOnTheFirstIterationOnly) {
  auto smooth = [](Tensor u, Tensor n) {
    auto [i, grid] = ag::while_loop(
        [&](const Tensor& i, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& g) {
          return std::make_tuple(i + 1, g.at(Slice{1, -1}, Slice{1, -1}).set(g(Slice{ag::none, -2}, Slice{1, -1}) * 0.5f +
                                                                             g(Slice{1, -1}, Slice{2}) * 0.5f));
        },
        std::make_tuple(ag::constant(0), u));
    return grid;
  };
  auto scaled_border = [](Tensor u, Tensor n) {
    auto [i, grid] = ag::while_loop(
        [&](const Tensor& i, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& g) {
          const Tensor half = g * 0.5f;  // read by the new interior too: not updated in place
          return std::make_tuple(i + 1, half.at(Slice{1, -1}).set(half(Slice{2}) + g(Slice{ag::none, -2})));
        },
        std::make_tuple(ag::constant(0), u));
    return grid;
  };
  auto swapped = [](Tensor u, Tensor v, Tensor n) {
    auto [i, p, q] = ag::while_loop(
        [&](const Tensor& i, const Tensor&, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& p, const Tensor& q) {
          return std::make_tuple(i + 1, q.at(Slice{1, -1}).set(p(Slice{1, -1}) * 2.0f), p.at(Slice{1, -1}).set(q(Slice{2}) - 1.0f));
        },
        std::make_tuple(ag::constant(0), u, v));
    return std::make_tuple(p, q);
  };
  auto f = ag::function(smooth);
  for (uint64_t seed : {21, 22, 23})
    for (int n : {0, 1, 2, 3, 4}) {
      const Tensor u = sample(ag::float32, {9, 12}, seed, Values::Moderate);
      agtest::expect_same(smooth(u, ag::constant(n)), f(u, ag::constant(n)), kTol, fmt::format("seed {}, {} steps", seed, n));
    }
  const std::string ir = f.get_concrete_function(sample(ag::float32, {9, 12}, 21), ag::constant(2)).llvm_ir(false);
  EXPECT_TRUE(has(ir, "xor i1 %while.again, true")) << "the border is copied every step\n" << ir;

  const Tensor u = sample(ag::float32, {30}, 24, Values::Moderate), v = sample(ag::float32, {30}, 25, Values::Moderate);
  for (int n : {1, 2, 3, 4}) {
    agtest::expect_three_way("scaled border, " + std::to_string(n), scaled_border, kTol, u, ag::constant(n));
    agtest::expect_three_way("swapped, " + std::to_string(n), swapped, kTol, u, v, ag::constant(n));
  }
  auto g = ag::function(scaled_border);
  EXPECT_FALSE(has(g.get_concrete_function(u, ag::constant(2)).llvm_ir(false), "xor i1 %while.again, true"));
  auto h = ag::function(swapped);
  EXPECT_FALSE(has(h.get_concrete_function(u, v, ag::constant(2)).llvm_ir(false), "xor i1 %while.again, true"));
}

TEST(JitTwinState, AnUpdateReturnedOrBranchedIsComputedIntoItsBox) {
  // A function result: the stencil into the output's box, the border copied.
  auto step = [](Tensor x) {
    return x.at(Slice{1, -1}, Slice{1, -1}).set(x(Slice{ag::none, -2}, Slice{1, -1}) + x(Slice{2}, Slice{1, -1}) * 0.5f);
  };
  // A box of whole rows, and one of a middle dim of a 3-D grid, from a broadcast operand.
  auto rows = [](Tensor x) { return x.at(Slice{2, 4}).set(x(Slice{1, 3}) * 3.0f); };
  auto middle = [](Tensor x, Tensor r) { return x.at(Slice{}, Slice{1, 3}).set(ag::exp(r) + x(Slice{}, Slice{2, 4})); };
  // In a branch: into the If's output.
  auto branched = [](Tensor x) {
    return ag::cond(ag::reduce_sum(x) > 0.0f, [&] { return x.at(Slice{1}).set(x(Slice{ag::none, -1}) - 1.0f); },
                    [&] { return x * 2.0f; });
  };
  // The update's value read again: a buffer of its own, copied into the box.
  auto read_twice = [](Tensor x) {
    const Tensor v = x(Slice{1}) * 2.0f;
    return std::make_tuple(x.at(Slice{ag::none, -1}).set(v), ag::reduce_sum(v));
  };
  const Tensor x = sample(ag::float32, {6, 9}, 8, Values::Moderate);
  const Tensor g = sample(ag::float32, {3, 5, 4}, 9, Values::Moderate), r = sample(ag::float32, {2, 1}, 10, Values::Moderate);
  agtest::expect_three_way("step", step, kTol, x);
  agtest::expect_three_way("rows", rows, kTol, x);
  agtest::expect_three_way("middle", middle, kTol, g, r);
  agtest::expect_three_way("branched", branched, kTol, x);
  agtest::expect_three_way("branched, other side", branched, kTol, x - 10.0f);
  agtest::expect_three_way("read twice", read_twice, kTol, x);
  for (const std::string& plan : {agtest::fused_plan(step, {}, x), agtest::fused_plan(rows, {}, x),
                                  agtest::fused_plan(middle, {}, g, r), agtest::fused_plan(branched, {}, x)})
    EXPECT_TRUE(has(plan, "[box of %")) << plan;
  EXPECT_FALSE(has(agtest::fused_plan(read_twice, {}, x), "box of")) << agtest::fused_plan(read_twice, {}, x);
}

}  // namespace
