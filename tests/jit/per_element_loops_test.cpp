// Staged while loops over a mask run element by element (per_element_loops.h): the plan marks the
// While `per_element` only when the rules prove each element's own loop gives the global loop's
// state, and every case checks eager == interpreter (the global loop) == JIT. Counters read after
// the loop, broadcast invariants, the -0.0 rule, loops that must stay global, the pool split, a
// saved model compiled ahead of time, and the loop inside a staged loop, a nested Function and
// under tapes.
#include <ag/saved_model.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "../common/log_capture.h"
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "loop_splits_mode.h"

namespace {

using ag::Tensor;
using agtest::fused_plan;

#define LOC(line) AG_SOURCE_LOC("per_element_loops.cpp", line)

bool per_element(const std::string& plan) { return plan.find(", per_element}") != std::string::npos; }

// Escape counts of c = cr + i ci, as bench/apps/mandelbrot.cpp writes them; `cr` and `ci`
// broadcast to the grid. Returns the counts and, with `with_count`, the iterations the loop ran.
std::tuple<Tensor, Tensor> escape(Tensor cr, Tensor ci, int max_iterations) {
  const Tensor grid = ag::zeros_like(cr + ci);
  Tensor zr = grid, zi = grid, counts = grid, active = grid > -1.0f, i = 0;
  ag::while_stmt([&] { return ag::reduce_any(active) & (i < max_iterations); },
                 [&] {
                   const Tensor next_r = zr * zr - zi * zi + cr, next_i = 2.0f * zr * zi + ci;
                   zr = ag::where(active, next_r, zr);
                   zi = ag::where(active, next_i, zi);
                   counts = counts + ag::cast(active, ag::float32);
                   active = active & (zr * zr + zi * zi < 4.0f);
                   i += 1;
                 },
                 ag::state(zr, zi, counts, active, i), {"zr", "zi", "counts", "active", "i"}, LOC(0));
  return {counts, i};
}

Tensor grid_axis(int64_t n, float lo, float hi, ag::Shape shape) {
  return ag::reshape(ag::linspace(lo, hi, n), shape);
}

// A per-point loop in plain C++: the reference for the counts.
std::vector<float> escape_by_hand(const std::vector<float>& cr, const std::vector<float>& ci, int max_iterations) {
  std::vector<float> counts;
  for (float y : ci)
    for (float x : cr) {
      float zr = 0, zi = 0;
      int n = 0;
      while (n < max_iterations) {
        const float r = zr * zr - zi * zi + x, im = 2.0f * zr * zi + y;
        zr = r, zi = im;
        ++n;
        if (zr * zr + zi * zi >= 4.0f) break;
      }
      counts.push_back(static_cast<float>(n));
    }
  return counts;
}

TEST(JitPerElementLoops, MandelbrotRunsElementByElementWithItsCounter) {
  const Tensor cr = grid_axis(37, -2.0f, 0.5f, {1, 37}), ci = grid_axis(29, -1.25f, 1.25f, {29, 1});
  auto fn = [](Tensor x, Tensor y) { return escape(x, y, 60); };
  agtest::expect_three_way("escape counts", fn, {.rtol = 0, .atol = 0}, cr, ci);
  const std::string plan = fused_plan(fn, {}, cr, ci);
  EXPECT_TRUE(per_element(plan)) << plan;
  auto f = ag::function(fn);
  const auto [counts, i] = f(cr, ci);
  // The counter is the global loop's: the longest run (points inside the set run all 60).
  EXPECT_EQ(i.item<int32_t>(), 60);
  // The counts of a C++ loop over each point (no FMA contraction in either: the same floats).
  const std::vector<float> by_hand = escape_by_hand(cr.to_vector<float>(), ci.to_vector<float>(), 60);
  const std::vector<float> got = counts.to_vector<float>();
  ASSERT_EQ(got.size(), by_hand.size());
  size_t differ = 0;
  for (size_t k = 0; k < got.size(); ++k) differ += got[k] != by_hand[k];
  EXPECT_EQ(differ, 0u);
}

// Blocks of lanes (a vector register's elements running the loop together) against each element
// alone (AG_JIT_VECTOR_LOOPS=0): both are the whole loop's values, so they agree bit for bit; the
// vector form's code (as emitted) holds the vector loop and its or-reduction.
TEST(JitPerElementLoops, BlocksOfLanesEqualElementsAlone) {
  const Tensor cr = grid_axis(53, -2.0f, 0.5f, {1, 53}), ci = grid_axis(31, -1.25f, 1.25f, {31, 1});
  auto fn = [](Tensor x, Tensor y) { return escape(x, y, 80); };
  auto lanes = ag::function(fn);
  const auto [counts, i] = lanes(cr, ci);
  const std::string ir = lanes.get_concrete_function(cr, ci).llvm_ir(/*optimized=*/false);
  EXPECT_NE(ir.find("element.while.body"), std::string::npos) << ir;
  EXPECT_NE(ir.find("llvm.vector.reduce.or"), std::string::npos) << "no block of lanes: " << ir;
  const agtest::ScopedEnv scalar("AG_JIT_VECTOR_LOOPS", "0");
  auto alone = ag::function(fn);
  const auto [counts1, i1] = alone(cr, ci);
  const std::string ir1 = alone.get_concrete_function(cr, ci).llvm_ir(/*optimized=*/false);
  EXPECT_EQ(ir1.find("llvm.vector.reduce.or"), std::string::npos) << ir1;
  EXPECT_TRUE(agtest::same_tensor(counts1, counts, {.rtol = 0, .atol = 0}));
  EXPECT_EQ(i1.item<int32_t>(), i.item<int32_t>());
}

TEST(JitPerElementLoops, TheCounterOfALoopThatStopsEarlyOrNeverRuns) {
  // Every point escapes within a few iterations: the count is the longest escape, not the
  // limit; and a grid where every point starts inactive runs no iteration (i = 0).
  const Tensor far = grid_axis(16, 3.0f, 5.0f, {1, 16}), y = grid_axis(8, -1.0f, 1.0f, {8, 1});
  auto fn = [](Tensor x, Tensor yy) { return escape(x, yy, 100); };
  agtest::expect_three_way("escapes early", fn, {.rtol = 0, .atol = 0}, far, y);
  const int32_t ran = std::get<1>(ag::function(fn)(far, y)).item<int32_t>();
  EXPECT_GT(ran, 0);
  EXPECT_LT(ran, 5);
  auto none = [](Tensor x) {
    Tensor z = x, active = x > 10.0f, i = 0;
    ag::while_stmt([&] { return ag::reduce_any(active) & (i < 9); },
                   [&] {
                     z = ag::where(active, z * 0.5f, z);
                     active = active & (z > 1.0f);
                     i += 1;
                   },
                   ag::state(z, active, i), {"z", "active", "i"}, LOC(0));
    return std::make_tuple(z, i);
  };
  const Tensor x = ag::random_uniform({6, 5}, ag::float32, -1, 1, 1);
  agtest::expect_three_way("runs no iteration", none, {.rtol = 0, .atol = 0}, x);
  EXPECT_TRUE(per_element(fused_plan(none, {}, x)));
  EXPECT_EQ(std::get<1>(ag::function(none)(x)).item<int32_t>(), 0);
}

TEST(JitPerElementLoops, IntegersBoolsAndInvariantsOfEveryBroadcast) {
  // Collatz step counts per element: n in float32 (exact integers; floor_mod has no vector form,
  // so each element runs alone), int32 steps weighted by a [5] invariant (0 * x = 0 for
  // integers), a bool state besides the mask, a scalar invariant limit; the mask updated with
  // where(!active, ...).
  auto collatz = [](Tensor n0, Tensor bonus, Tensor limit) {
    Tensor n = n0, steps = ag::zeros_like(ag::cast(n0, ag::int32)), odd_seen = n0 < 0.0f, active = n0 > 1.0f, i = 0;
    ag::while_stmt([&] { return ag::reduce_any(active) & (i < limit); },
                   [&] {
                     const Tensor odd = ag::floormod(n, 2.0f) == 1.0f;
                     n = ag::where(ag::logical_not(active), n, ag::where(odd, 3.0f * n + 1.0f, n * 0.5f));
                     odd_seen = ag::where(active, odd_seen | odd, odd_seen);
                     steps = steps + ag::cast(active, ag::int32) * bonus;
                     active = active & (n != 1.0f);
                     i += 1;
                   },
                   ag::state(n, steps, odd_seen, active, i), {"n", "steps", "odd_seen", "active", "i"}, LOC(0));
    return std::make_tuple(n, steps, odd_seen, i);
  };
  const Tensor n0 = ag::constant(std::vector<float>{27, 1, 2, 97, 6, 7, 0, 12, 19, 31, 5, 8, 9, 10, 11}, {3, 5});
  const Tensor bonus = ag::constant(std::vector<int32_t>{1, 2, 3, 4, 5}, {5});
  agtest::expect_three_way("collatz", collatz, {.rtol = 0, .atol = 0}, n0, bonus, Tensor(1000));
  EXPECT_TRUE(per_element(fused_plan(collatz, {}, n0, bonus, Tensor(1000))));
  auto f = ag::function(collatz);
  const auto [n, steps, odd_seen, i] = f(n0, bonus, Tensor(1000));
  EXPECT_EQ(i.item<int32_t>(), 118);              // 97 takes 118 steps
  EXPECT_EQ(steps.to_vector<int32_t>()[0], 111);  // 27: 111 steps, bonus 1
  EXPECT_EQ(steps.to_vector<int32_t>()[3], 118 * 4);
  EXPECT_EQ(std::get<3>(f(n0, bonus, Tensor(50))).item<int32_t>(), 50);  // the limit stops every element
}

// The sign of zero: counts + cast(active) is counts itself at an inactive element only if counts
// is never -0.0 (-0.0 + 0.0 is +0.0, which the global loop computes for an element that started
// inactive while others ran). A -0.0 start keeps the loop global, and the zeros come out +0.0.
TEST(JitPerElementLoops, ANegativeZeroStartKeepsTheLoopGlobal) {
  auto counting = [](float sign) {
    return [sign](Tensor x) {
      Tensor z = x, counts = ag::zeros_like(x) * sign, active = x > 0.5f, i = 0;
      ag::while_stmt([&] { return ag::reduce_any(active) & (i < 20); },
                     [&] {
                       z = ag::where(active, z * 0.9f, z);
                       counts = counts + ag::cast(active, ag::float32);
                       active = active & (z > 0.5f);
                       i += 1;
                     },
                     ag::state(z, counts, active, i), {"z", "counts", "active", "i"}, LOC(0));
      return counts;
    };
  };
  const Tensor x = ag::constant({{0.1f, 0.9f}, {0.7f, -0.3f}});
  for (const float sign : {-1.0f, 1.0f}) {
    agtest::expect_three_way("counts", counting(sign), {.rtol = 0, .atol = 0}, x);
    const std::vector<float> counts = ag::function(counting(sign))(x).to_vector<float>();
    EXPECT_FALSE(std::signbit(counts[0])) << "element 0 started inactive: the loop added +0.0 (sign " << sign << ")";
    EXPECT_FALSE(std::signbit(counts[3]));
    EXPECT_EQ(per_element(fused_plan(counting(sign), {}, x)), sign > 0) << sign;
  }
}

TEST(JitPerElementLoops, LoopsThatMustStayGlobal) {
  const Tensor x = ag::random_uniform({7, 9}, ag::float32, 0, 2, 2);
  auto loop = [](auto body, auto cond) {
    return [=](Tensor a) {
      Tensor z = a, active = a > 0.5f, i = 0;
      ag::while_stmt([&] { return cond(active, i); }, [&] { body(z, active, i); }, ag::state(z, active, i),
                     {"z", "active", "i"}, LOC(0));
      return std::make_tuple(z, i);
    };
  };
  auto any_and_count = [](const Tensor& active, const Tensor& i) { return ag::reduce_any(active) & (i < 30); };
  auto masked = [](Tensor& z, Tensor& active, Tensor& i) {
    z = ag::where(active, z * 0.8f, z);
    active = active & (z > 0.5f);
    i += 1;
  };
  // The reference: qualifies.
  auto ok = loop(masked, any_and_count);
  agtest::expect_three_way("masked", ok, {.rtol = 0, .atol = 0}, x);
  EXPECT_TRUE(per_element(fused_plan(ok, {}, x)));
  // z changes when inactive too.
  auto unmasked = loop([](Tensor& z, Tensor& active, Tensor& i) {
    z = z * 0.8f;
    active = active & (z > 0.5f);
    i += 1;
  }, any_and_count);
  // The body reads a reduction of the whole grid.
  auto reduces = loop([](Tensor& z, Tensor& active, Tensor& i) {
    z = ag::where(active, z * 0.8f + 0.01f * ag::reduce_mean(z), z);
    active = active & (z > 0.5f);
    i += 1;
  }, any_and_count);
  // An inactive element can come back: the mask is not and'ed with itself.
  auto revives = loop([](Tensor& z, Tensor& active, Tensor& i) {
    z = ag::where(active, z * 0.8f, z + 0.3f);
    active = z > 0.5f;
    i += 1;
  }, any_and_count);
  // or'ed with a scalar: the loop runs on when no element is active.
  auto or_cond = loop(masked, [](const Tensor& active, const Tensor& i) { return ag::reduce_any(active) | (i < 3); });
  // all instead of any.
  auto all_cond = loop(masked, [](const Tensor& active, const Tensor& i) { return ag::reduce_all(active) & (i < 30); });
  const std::vector<std::pair<const char*, std::function<std::tuple<Tensor, Tensor>(Tensor)>>> global{
      {"unmasked", unmasked}, {"reduces", reduces}, {"revives", revives}, {"or", or_cond}, {"all", all_cond}};
  for (const auto& [what, fn] : global) {
    agtest::expect_three_way(what, fn, {}, x);
    EXPECT_FALSE(per_element(fused_plan(fn, {}, x))) << what;
  }
}

// The mask computed in the cond, as NumPy code writes it: `while any(|z| < 2)`, the body
// recomputing the same mask for its `where`s.
std::tuple<Tensor, Tensor> escape_computed_mask(Tensor cr, Tensor ci, int max_iterations) {
  const Tensor grid = ag::zeros_like(cr + ci);
  Tensor zr = grid, zi = grid, counts = grid, i = 0;
  ag::while_stmt([&] { return ag::reduce_any(zr * zr + zi * zi < 4.0f) & (i < max_iterations); },
                 [&] {
                   const Tensor active = zr * zr + zi * zi < 4.0f;
                   const Tensor next_r = zr * zr - zi * zi + cr, next_i = 2.0f * zr * zi + ci;
                   zr = ag::where(active, next_r, zr);
                   zi = ag::where(active, next_i, zi);
                   counts = counts + ag::cast(active, ag::float32);
                   i += 1;
                 },
                 ag::state(zr, zi, counts, i), {"zr", "zi", "counts", "i"}, LOC(0));
  return {counts, i};
}

TEST(JitPerElementLoops, AMaskComputedInTheCond) {
  const Tensor cr = grid_axis(37, -2.0f, 0.5f, {1, 37}), ci = grid_axis(29, -1.25f, 1.25f, {29, 1});
  auto fn = [](Tensor x, Tensor y) { return escape_computed_mask(x, y, 60); };
  agtest::expect_three_way("escape counts, mask in the cond", fn, {.rtol = 0, .atol = 0}, cr, ci);
  EXPECT_TRUE(per_element(fused_plan(fn, {}, cr, ci))) << fused_plan(fn, {}, cr, ci);
  const auto [counts, i] = ag::function(fn)(cr, ci);
  EXPECT_EQ(i.item<int32_t>(), 60);
  EXPECT_EQ(counts.to_vector<float>(), escape_by_hand(cr.to_vector<float>(), ci.to_vector<float>(), 60));

  const Tensor x = ag::random_uniform({7, 9}, ag::float32, 0, 2, 2);
  auto loop = [](auto mask_in_cond, auto mask_in_body) {
    return [=](Tensor a) {
      Tensor z = a, i = 0;
      ag::while_stmt([&] { return ag::reduce_any(mask_in_cond(z, i)) & (i < 30); },
                     [&] {
                       z = ag::where(mask_in_body(z, i), z * 0.8f, z);
                       i += 1;
                     },
                     ag::state(z, i), {"z", "i"}, LOC(0));
      return std::make_tuple(z, i);
    };
  };
  auto above = [](float t) { return [t](const Tensor& z, const Tensor& = {}) { return z > t; }; };
  auto same = loop(above(0.5f), above(0.5f));
  agtest::expect_three_way("the body's mask is the cond's", same, {.rtol = 0, .atol = 0}, x);
  EXPECT_TRUE(per_element(fused_plan(same, {}, x)));
  // The body updates elements the cond calls finished (0.4 < z <= 0.5).
  auto wider = loop(above(0.5f), above(0.4f));
  // The mask reads the counter: a finished element becomes active again as i grows.
  auto with_counter = [](const Tensor& z, const Tensor& i) { return z * 10.0f + ag::cast(i, ag::float32) > 12.0f; };
  auto reads_counter = loop(with_counter, with_counter);
  for (const auto& [what, fn] : std::vector<std::pair<const char*, std::function<std::tuple<Tensor, Tensor>(Tensor)>>>{
           {"a wider mask in the body", wider}, {"the mask reads the counter", reads_counter}}) {
    agtest::expect_three_way(what, fn, {}, x);
    EXPECT_FALSE(per_element(fused_plan(fn, {}, x))) << what;
  }
}

TEST(JitPerElementLoops, IntegerDivisionThatMayRaiseKeepsTheLoopGlobal) {
  // d / k raises for k == 0 in the global loop even at elements already inactive.
  auto fn = [](Tensor d, Tensor k) {
    Tensor n = d, active = d > 0, i = 0;
    ag::while_stmt([&] { return ag::reduce_any(active) & (i < 5); },
                   [&] {
                     n = ag::where(active, n / k, n);
                     active = active & (n > 1);
                     i += 1;
                   },
                   ag::state(n, active, i), {"n", "active", "i"}, LOC(0));
    return n;
  };
  const Tensor d = ag::constant(std::vector<int32_t>{100, 7, 0, 64}, {4});
  const Tensor k = ag::constant(std::vector<int32_t>{2, 3, 5, 4}, {4});
  agtest::expect_three_way("division", fn, {}, d, k);
  EXPECT_FALSE(per_element(fused_plan(fn, {}, d, k)));
}

TEST(JitPerElementLoops, TheNestSplitsOverThePoolUnlessACounterIsRead) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const ag::detail::ScopedNumThreads two(2);
  const Tensor cr = grid_axis(64, -2.0f, 0.5f, {1, 64}), ci = grid_axis(64, -1.25f, 1.25f, {64, 1});
  auto splits_of_cached_call = [](auto& f, const Tensor& a, const Tensor& b) {
    f(a, b);
    const int64_t before = ag::detail::parallel_loops_split();
    f(a, b);
    return ag::detail::parallel_loops_split() - before;
  };
  auto counts_only = ag::function([](Tensor x, Tensor y) { return std::get<0>(escape(x, y, 40)); });
  auto with_counter = ag::function([](Tensor x, Tensor y) { return escape(x, y, 40); });
  EXPECT_EQ(splits_of_cached_call(counts_only, cr, ci), 1);
  EXPECT_EQ(splits_of_cached_call(with_counter, cr, ci), 0);
  // Two threads, one thread, the interpreter: the same counts.
  const Tensor split = counts_only(cr, ci);
  agtest::expect_three_way("64 x 64 on two threads", [](Tensor x, Tensor y) { return std::get<0>(escape(x, y, 40)); },
                           {.rtol = 0, .atol = 0}, cr, ci);
  const ag::detail::ScopedNumThreads one(1);
  EXPECT_TRUE(agtest::same_tensor(split, counts_only(cr, ci), {.rtol = 0, .atol = 0}));
}

// A saved model compiled ahead of time for every CPU level: the loader plans the graph again
// (per_element_loops runs at plan time, in libag_jit_core), links the saved code instead of
// compiling, and gets the Function's counts and counter.
TEST(JitPerElementLoops, SavedCompiledForEveryLevelAndLinked) {
  namespace fs = std::filesystem;
  const std::string dir = (fs::temp_directory_path() / ("agc_per_element_saved_" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  const Tensor cr = grid_axis(40, -2.0f, 0.5f, {1, 40}), ci = grid_axis(24, -1.25f, 1.25f, {24, 1});
  auto f = ag::function([](Tensor x, Tensor y) { return escape(x, y, 50); });
  ag::saved_model::save(dir, {{"escape", f.get_concrete_function(cr, ci)}},
                        {.compiled_for = {"x86-64-v4", "x86-64-v3", "x86-64-v2"}});
  auto capture = std::make_unique<agtest::LogCapture>(ag::detail::LogTopic::Compile);
  const std::vector<Tensor> loaded = ag::saved_model::load(dir).call("escape", {cr, ci});
  const std::string log = capture->text();
  capture.reset();
  EXPECT_NE(log.find("agc: jit: escape: linked the saved model's code"), std::string::npos) << log;
  const auto [counts, i] = f(cr, ci);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_TRUE(agtest::same_tensor(counts, loaded[0], {.rtol = 0, .atol = 0}));
  EXPECT_EQ(loaded[1].item<int32_t>(), i.item<int32_t>());
  fs::remove_all(dir);
}

TEST(JitPerElementLoops, InAStagedLoopANestedFunctionAndUnderTapes) {
  // The escape loop inside a staged loop over zoom levels, through a nested Function, and the
  // gradient of sum(counts * scale) with respect to `scale` under a tape inside the trace (the
  // counts are constants of scale) and outside it.
  auto inner = ag::function([](Tensor x, Tensor y) { return std::get<0>(escape(x, y, 30)); });
  auto fn = [inner](Tensor cr, Tensor ci, Tensor scale) mutable {
    Tensor total = ag::zeros_like(cr + ci), level = 0;
    ag::while_stmt([&] { return level < 3; },
                   [&] {
                     const Tensor zoom = 1.0f / (ag::cast(level, ag::float32) + 1.0f);
                     total = total + inner(cr * zoom, ci * zoom);
                     level += 1;
                   },
                   ag::state(total, level), {"total", "level"}, LOC(0));
    ag::GradientTape tape;
    tape.watch(scale);
    const Tensor loss = ag::reduce_sum(total * scale);
    return std::make_tuple(total, tape.gradient(loss, scale));
  };
  const Tensor cr = grid_axis(11, -2.0f, 0.5f, {1, 11}), ci = grid_axis(7, -1.0f, 1.0f, {7, 1});
  agtest::expect_three_way("zoom levels", fn, {.rtol = 0, .atol = 0}, cr, ci, Tensor(2.0f));
  // Nested: the inner Function's own plan runs the loop per element.
  EXPECT_TRUE(per_element(fused_plan([](Tensor x, Tensor y) { return std::get<0>(escape(x, y, 30)); }, {}, cr, ci)));
  // A tape outside the Function: d/d(scale) sum(f(x) * scale) = sum(f(x)).
  auto outer = ag::function([](Tensor x, Tensor y, Tensor s) { return std::get<0>(escape(x * s, y * s, 30)); });
  Tensor s = 1.0f;
  ag::GradientTape tape;
  tape.watch(s);
  const Tensor counts = outer(cr, ci, s);
  const Tensor g = tape.gradient(ag::reduce_sum(counts * s), s);
  EXPECT_FLOAT_EQ(g.item<float>(), ag::reduce_sum(counts).item<float>());
}

}  // namespace
