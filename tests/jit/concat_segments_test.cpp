// Elementwise ops over concatenations computed segment by segment (concat_segments.h) and a
// concat's computed pieces written straight into its buffer (plan_updates.h): periodic stencils
// in one and two dimensions, broadcast and lower-rank operands, a concat read by a reduction
// too, and the cases left as written (dynamic shapes, too many segments, an op that may raise,
// concats of computed pieces read several times). Every case eager == interpreter == JIT, bit
// for bit (the same ops on the same elements); under tapes, in a staged loop, through a nested
// Function.
#include <string>
#include <vector>

#include "jit_test_util.h"
#include "plan.h"

namespace {

using ag::Slice;
using ag::Tensor;

// x rolled by k along `axis` (0 or 1): result[i] = x[i - k].
Tensor roll(const Tensor& x, int64_t k, int axis = 0) {
  if (axis == 0) return ag::concat({x(Slice{-k}), x(Slice{ag::none, -k})}, 0);
  return ag::concat({x(ag::all, Slice{-k}), x(ag::all, Slice{ag::none, -k})}, 1);
}

// A periodic 5-point Laplacian step on a 2-D grid.
Tensor periodic_heat(const Tensor& u) {
  return u + 0.1f * (roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1) - 4.0f * u);
}

// `step` applied to x n times, in a staged loop.
template <class Step>
Tensor staged_steps(Step& step, Tensor x, Tensor n) {
  Tensor i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   x = step(x);
                   i += 1;
                 },
                 ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("concat_segments_test.cpp", 0));
  return x;
}

int concats(const std::string& plan) { return agtest::occurrences(plan, " = Concat("); }
int copied_slices(const std::string& plan) {
  int n = 0;
  for (size_t at = plan.find(" = Slice("); at != std::string::npos; at = plan.find(" = Slice(", at + 1)) {
    const std::string line = plan.substr(at, plan.find('\n', at) - at);
    n += line.find("[arena]") != std::string::npos || line.find("[owned]") != std::string::npos;
  }
  return n;
}

constexpr agtest::Tol kExact{.rtol = 0, .atol = 0};
constexpr int kMaxPieces = 8;  // concat_segments.h, kMaxSegments

TEST(JitConcatSegments, APeriodicStencilReadsItsGridInPlace) {
  const Tensor u = ag::random_uniform({9, 13}, ag::float32, -1, 1, 1);
  agtest::expect_three_way("periodic heat", periodic_heat, kExact, u);
  const std::string plan = agtest::fused_plan(periodic_heat, {}, u);
  // Rolls along both axes: three bands of rows, each cut into three blocks of columns (nine
  // loops, the corners in registers), every piece written in its place: the bands' concats are
  // pieces of the result's. Nothing is copied and no temporary is left.
  EXPECT_EQ(concats(plan), 4) << plan;
  int bands_in_place = 0;
  for (size_t at = plan.find(" = Concat("); at != std::string::npos; at = plan.find(" = Concat(", at + 1))
    bands_in_place += plan.substr(at, plan.find('\n', at) - at).find("[box of %") != std::string::npos;
  EXPECT_EQ(bands_in_place, 3) << plan;
  EXPECT_EQ(copied_slices(plan), 0) << plan;
  EXPECT_EQ(agtest::occurrences(plan, "[arena"), 0) << plan;
  // One dimension: nothing copied at all.
  auto ring = [](Tensor x) { return (roll(x, -1) - roll(x, 2)) * roll(x, 1) - x + 8.0f; };
  const Tensor x = ag::random_uniform({41}, ag::float32, -1, 1, 2);
  agtest::expect_three_way("lorenz96", ring, kExact, x);
  const std::string ring_plan = agtest::fused_plan(ring, {}, x);
  EXPECT_EQ(concats(ring_plan), 1) << ring_plan;
  EXPECT_EQ(copied_slices(ring_plan), 0) << ring_plan;
}

TEST(JitConcatSegments, ChainedStepsAndDiagonalRolls) {
  // A second step reads the first's bands in place (pieces of a band with strides of their
  // own, read by its loops alone: plan_updates.cpp); a roll of a roll (a diagonal neighbour, as
  // the Game of Life counts them) is a concat of slices of a concat, whose boxes are read from
  // the one piece that holds them.
  const Tensor u = ag::random_uniform({6, 8}, ag::float32, -1, 1, 9);
  agtest::expect_three_way("two steps", [](Tensor u) { return periodic_heat(periodic_heat(u)); }, kExact, u);
  auto neighbours = [](Tensor u) {
    Tensor n = ag::zeros_like(u);
    for (int64_t dr : {-1, 0, 1})
      for (int64_t dc : {-1, 0, 1})
        if (dr != 0 || dc != 0) n = n + roll(roll(u, dr, 0), dc, 1);
    return n;
  };
  agtest::expect_three_way("eight neighbours", neighbours, kExact, u);
}

// Conway's rule on a uint8 board: eight neighbours as rolls (four of them rolls of rolls),
// summed, and the count compared twice.
Tensor life_step(const Tensor& b) {
  const Tensor up = roll(b, 1, 0), down = roll(b, -1, 0);
  const Tensor n = up + down + roll(b, 1, 1) + roll(b, -1, 1) + roll(up, 1, 1) + roll(up, -1, 1) + roll(down, 1, 1) +
                   roll(down, -1, 1);
  return ag::cast((n == 3) | ((b == 1) & (n == 2)), ag::uint8);
}

TEST(JitConcatSegments, TheGameOfLifeCountsInEachSegment) {
  const Tensor b = ag::cast(ag::random_uniform({12, 70}, ag::float32, 0, 1, 12) < 0.4f, ag::uint8);
  agtest::expect_three_way("life", life_step, kExact, b);
  // The count's two compares meet in an or: each of the nine segments (rows cut at the rolls'
  // boundaries, then columns) counts its cells in its own loop. The diagonals' columns within a
  // band of rows are segments of a sum read once: cut again, never written out whole.
  const std::string plan = agtest::fused_plan(life_step, {}, b);
  EXPECT_EQ(agtest::occurrences(plan, "[arena"), 0) << plan;
  EXPECT_EQ(copied_slices(plan), 0) << plan;
  EXPECT_EQ(concats(plan), 4) << plan;
  // Generations in a staged loop, against a plain loop over the cells.
  auto generations = [](Tensor b, Tensor n) { return staged_steps(life_step, b, n); };
  agtest::expect_three_way("12 generations", generations, kExact, b, ag::constant(12));
  std::vector<uint8_t> cells = b.to_vector<uint8_t>(), next(cells.size());
  const int64_t rows = 12, cols = 70;
  for (int g = 0; g < 12; ++g) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int count = 0;
        for (int64_t dr : {-1, 0, 1})
          for (int64_t dc : {-1, 0, 1})
            if (dr != 0 || dc != 0) count += cells[static_cast<size_t>((r + dr + rows) % rows * cols + (c + dc + cols) % cols)];
        const uint8_t alive = cells[static_cast<size_t>(r * cols + c)];
        next[static_cast<size_t>(r * cols + c)] = static_cast<uint8_t>(count == 3 || (alive && count == 2));
      }
    std::swap(cells, next);
  }
  auto f = ag::function(generations);
  EXPECT_EQ(f(b, ag::constant(12)).to_vector<uint8_t>(), cells);
}

TEST(JitConcatSegments, ReadersCutAlikeOnlyWhenTheyMeet) {
  // Readers whose chains meet are cut at d's boundaries (two Adds, one per segment) and d is
  // never written whole; readers in separate results (a Runge-Kutta stage read by later
  // stages) read d's buffer whole, each in one loop.
  auto meet = [](Tensor x) {
    const Tensor d = roll(x, 1) * 2.0f;
    return (d + 1.0f) * (d * 3.0f);
  };
  auto apart = [](Tensor x) {
    const Tensor d = roll(x, 1) * 2.0f;
    return std::make_tuple(d + 1.0f, d * 3.0f);
  };
  const Tensor x = ag::random_uniform({40}, ag::float32, -1, 1, 13);
  agtest::expect_three_way("readers meet", meet, kExact, x);
  agtest::expect_three_way("readers apart", apart, kExact, x);
  const std::string met = agtest::fused_plan(meet, {}, x), separate = agtest::fused_plan(apart, {}, x);
  EXPECT_EQ(agtest::occurrences(met, " = Add("), 2) << met;
  EXPECT_EQ(agtest::occurrences(met, "[arena"), 0) << met;
  EXPECT_EQ(agtest::occurrences(separate, " = Add("), 1) << separate;
}

TEST(JitConcatSegments, BroadcastAndLowerRankOperands) {
  // A [5, 1] column broadcast along the concat's axis 1, a [7] row of lower rank, a scalar.
  auto fn = [](Tensor m, Tensor col, Tensor row) {
    return ag::maximum(roll(m, 2, 1) * col + row, 0.25f) - roll(m, -3, 1);
  };
  const Tensor m = ag::random_uniform({5, 7}, ag::float32, -1, 1, 3), col = ag::random_uniform({5, 1}, ag::float32, -1, 1, 4),
               row = ag::random_uniform({7}, ag::float32, -1, 1, 5);
  agtest::expect_three_way("broadcast operands", fn, kExact, m, col, row);
  // A concat along axis 0 read with an operand that broadcasts along it ([1, 7]).
  auto rows = [](Tensor m, Tensor r) { return roll(m, 1) * r; };
  agtest::expect_three_way("broadcast rows", rows, kExact, m, ag::random_uniform({1, 7}, ag::float32, -1, 1, 6));
  EXPECT_NE(agtest::fused_plan(rows, {}, m, ag::random_uniform({1, 7}, ag::float32, -1, 1, 6)).find("[box of %"), std::string::npos);
}

TEST(JitConcatSegments, AConcatAlsoReadByAReductionIsComputedOnce) {
  auto fn = [](Tensor x) {
    const Tensor d = roll(x, 1) - x;  // segments, written into d's buffer
    // (not the sum of d itself: it telescopes to rounding noise, whose value depends on the
    // order the vector width sums in)
    return std::make_tuple(d * 2.0f, ag::reduce_sum(d * d), ag::reduce_max(d));
  };
  const Tensor x = ag::random_uniform({300}, ag::float32, -1, 1, 7);
  agtest::expect_three_way("roll read by reductions", fn, {.rtol = 1e-5, .atol = 1e-6}, x);
}

// Every pair of arena values of `s` (and its sub-scopes) live at the same time has bytes of its
// own; a concat's interval begins where its first piece is written into it (Box), or its first
// piece's first piece.
void expect_disjoint_arena(const ag::jit::ScopePlan& s) {
  using ag::jit::ValueStorage;
  const ag::Graph& g = *s.graph;
  struct Interval {
    int32_t first, last;
    int64_t begin, end;
  };
  std::vector<int32_t> first(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i) first[i] = static_cast<int32_t>(i);
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& vp : s.values[i])
      if (vp.storage == ValueStorage::Box) first[vp.root.node] = std::min(first[vp.root.node], first[i]);
  std::vector<Interval> arena;
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (size_t k = 0; k < s.values[i].size(); ++k) {
      const auto& vp = s.values[i][k];
      if (vp.storage != ValueStorage::Arena) continue;
      const int64_t bytes = ag::jit::static_bytes(g.nodes[i].outputs[k]);
      arena.push_back({first[i], std::max(vp.last_use, static_cast<int32_t>(i)), vp.offset, vp.offset + bytes});
    }
  for (size_t a = 0; a < arena.size(); ++a)
    for (size_t b = a + 1; b < arena.size(); ++b) {
      const bool together = arena[a].first <= arena[b].last && arena[b].first <= arena[a].last;
      const bool shared = arena[a].begin < arena[b].end && arena[b].begin < arena[a].end;
      EXPECT_FALSE(together && shared) << "arena values " << a << " and " << b << " share bytes while both live";
    }
  for (const auto& subs : s.children)
    for (const auto& child : subs) expect_disjoint_arena(*child);
}

TEST(JitConcatSegments, AConcatHoldsItsBufferFromItsFirstPiece) {
  // The segments of the first difference (6 elements at the start, read by two segments of the
  // product) live across the product's first piece, written into the result's buffer.
  auto fn = [](Tensor x) {
    const Tensor d = (roll(x, -3) - roll(x, 6)) * roll(x, 3) * 0.5f;  // a temporary: arena
    return ag::cumsum(d, 0);
  };
  const Tensor x = ag::random_uniform({64}, ag::float32, -1, 1, 10);
  agtest::expect_three_way("rolls by 3 and 6", fn, kExact, x);
  auto f = ag::function(fn);
  auto concrete = f.get_concrete_function(x);
  const ag::jit::Program program = ag::jit::plan_program(std::make_shared<const ag::Graph>(concrete.graph()));
  const std::string plan = agtest::fused_plan(fn, {}, x);
  ASSERT_NE(plan.find("[box of %"), std::string::npos) << plan;
  expect_disjoint_arena(*program.root);
  // Bands of a 2-D stencil in their place in a temporary: the temporary holds its buffer from
  // its first band's first piece.
  auto bands = [](Tensor u) { return ag::cumsum(periodic_heat(u), 1); };
  const Tensor u = ag::random_uniform({9, 13}, ag::float32, -1, 1, 11);
  agtest::expect_three_way("2-D stencil into a temporary", bands, {.rtol = 1e-6, .atol = 1e-6}, u);
  auto g = ag::function(bands);
  auto cg = g.get_concrete_function(u);
  const ag::jit::Program banded = ag::jit::plan_program(std::make_shared<const ag::Graph>(cg.graph()));
  expect_disjoint_arena(*banded.root);
}

TEST(JitConcatSegments, CasesLeftAsWritten) {
  const Tensor x = ag::random_uniform({20}, ag::float32, -1, 1, 8);
  // Nine rolls: more segments than kMaxSegments (8).
  auto many = [](Tensor x) {
    Tensor s = x;
    for (int k = 1; k <= 9; ++k) s = s + roll(x, k);
    return s;
  };
  agtest::expect_three_way("nine rolls", many, kExact, x);
  // The sums segment while their boundaries number at most 8 (seven rolls); the last two are
  // concatenated as written, and no concat has more than 8 pieces.
  const std::string plan = agtest::fused_plan(many, {}, x);
  EXPECT_GE(concats(plan), 3) << plan;
  for (size_t at = plan.find(" = Concat("); at != std::string::npos; at = plan.find(" = Concat(", at + 1)) {
    const std::string args = plan.substr(at, plan.find(')', at) - at);
    EXPECT_LE(agtest::occurrences(args, "%"), kMaxPieces) << args;
  }
  // Integer floor division may raise (by zero): the segments would raise in another order.
  auto divides = [](Tensor n, Tensor d) { return ag::floordiv(roll(n, 1), d); };
  const Tensor n = ag::constant({7, 8, 9, 10, 11, 12}), d = ag::constant({1, 2, 3, 4, 5, 6});
  agtest::expect_three_way("floor division", divides, kExact, n, d);
  EXPECT_EQ(concats(agtest::fused_plan(divides, {}, n, d)), 1);
  auto f = ag::function(divides);
  EXPECT_THROW((void)f(n, ag::constant({1, 2, 0, 4, 5, 6})), ag::InvalidArgumentError);
  // A dynamic length: no static segments.
  auto dynamic = [](Tensor x) { return ag::concat({x, x * 2.0f}, 0) * 3.0f; };
  auto g = ag::function(dynamic, {.input_signature = {ag::TensorSpec({-1}, ag::float32)}});
  EXPECT_TRUE(agtest::same_tensor(dynamic(x), g(x), kExact));
}

TEST(JitConcatSegments, UnderTapesInAStagedLoopAndNested) {
  const Tensor u = ag::random_uniform({6, 8}, ag::float32, -1, 1, 9);
  // Gradient of a periodic step's energy with respect to the grid, under a tape in the trace.
  auto with_gradient = [](Tensor u0) {
    ag::GradientTape tape;
    tape.watch(u0);
    const Tensor v = periodic_heat(periodic_heat(u0));
    return std::make_tuple(v, tape.gradient(ag::reduce_sum(v * v), u0));
  };
  agtest::expect_three_way("gradient in the trace", with_gradient, {.rtol = 1e-5, .atol = 1e-6}, u);
  // Steps in a staged loop, through a nested Function.
  auto step = ag::function(periodic_heat);
  auto steps = [step](Tensor u, Tensor n) mutable { return staged_steps(step, u, n); };
  agtest::expect_three_way("10 steps", steps, kExact, u, ag::constant(10));
  // A tape outside the Function.
  Tensor u0 = u;
  ag::GradientTape tape;
  tape.watch(u0);
  const Tensor g = tape.gradient(ag::reduce_sum(step(u0) * u0), u0);
  ag::GradientTape eager;
  eager.watch(u0);
  const Tensor expected = eager.gradient(ag::reduce_sum(periodic_heat(u0) * u0), u0);
  EXPECT_TRUE(agtest::same_tensor(expected, g, {.rtol = 1e-6, .atol = 1e-6}));
}

}  // namespace
