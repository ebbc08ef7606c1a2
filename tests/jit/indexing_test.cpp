// NumPy-style indexing and functional updates staged: eager == interpreter == JIT, with their
// gradients under a tape inside the Function, in a staged loop (a heat stencil updating its
// interior every step), and an update box out of range at run time.
#include "jit_test_util.h"

namespace {

using ag::Slice;
using ag::Tensor;

TEST(JitIndexing, ReadsAndUpdatesThreeWay) {
  const Tensor x = ag::reshape(ag::cast(ag::range(24), ag::float32), {4, 6});
  auto fn = [](Tensor x) {
    return std::tuple{x(Slice{1, -1}, Slice{ag::none, ag::none, 2}), x(Slice{ag::none, ag::none, -1}, -1),
                      x(ag::newaxis, 2), x.at(Slice{1, 3}, Slice{2, 5}).set(-x(Slice{0, 2}, Slice{0, 3})),
                      x.at(ag::all, 0).add(100.0f), x.at(3).set(0.5f),
                      x.at(Slice{ag::none, ag::none, -2}, Slice{1, 5, 3}).add(x(Slice{0, 2}, Slice{0, 2}))};
  };
  const ag::FunctionStats s = agtest::expect_three_way("indexing", fn, {}, x);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

TEST(JitIndexing, GradientsUnderATapeInsideAFunction) {
  auto fn = [](Tensor x, Tensor w) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    tape.watch(w);
    const Tensor z = x.at(Slice{1, 3}, ag::all).set(ag::tanh(w) * x(Slice{0, 2}));
    const Tensor loss = ag::reduce_sum(z(ag::all, Slice{ag::none, ag::none, -2}) * z(ag::all, Slice{0, ag::none, 2}));
    return std::tuple{loss, tape.gradient(loss, x), tape.gradient(loss, w)};
  };
  const Tensor x = ag::reshape(ag::cast(ag::range(20), ag::float64) / 7.0, {4, 5});
  const Tensor w = ag::constant(std::vector<double>{0.3, -0.2, 0.5, 0.1, 0.4});
  const ag::FunctionStats s = agtest::expect_three_way("gradients", fn, {}, x, w);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

// An update whose box is known only at run time: its gradient takes the box of dy by the
// update's run-time dims (the eager call, with every shape known, takes the static path).
TEST(JitIndexing, UpdateGradientsWithDimsKnownOnlyAtRunTime) {
  const ag::FunctionOptions opts{.input_signature = {ag::TensorSpec({-1, 3}, ag::float64), ag::TensorSpec({-1, 3}, ag::float64)}};
  auto fn = [](Tensor x, Tensor v) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    tape.watch(v);
    const Tensor z = x.at(Slice{1}).set(v * 2.0);
    const Tensor loss = ag::reduce_sum(z * z * x);
    return std::tuple{loss, tape.gradient(loss, x), tape.gradient(loss, v)};
  };
  const Tensor x = ag::reshape(ag::cast(ag::range(12), ag::float64) / 5.0, {4, 3});
  const Tensor v = ag::reshape(ag::cast(ag::range(9), ag::float64) / 3.0 - 1.0, {3, 3});
  agtest::expect_three_way_with("gradients", fn, opts, {}, x, v);
  const Tensor x2 = ag::reshape(ag::cast(ag::range(6), ag::float64), {2, 3});
  agtest::expect_three_way_with("gradients, another batch", fn, opts, {}, x2, ag::ones({1, 3}, ag::float64));
}

// Jacobi steps of a 1-D heat equation with fixed ends: the interior is replaced each step.
TEST(JitIndexing, StencilInAStagedLoop) {
  auto heat = [](Tensor u, Tensor steps) {
    Tensor i = ag::constant(0);
    ag::while_stmt(
        [&] { return i < steps; },
        [&] {
          u = u.at(Slice{1, -1}).set(u(Slice{1, -1}) + (u(Slice{ag::none, -2}) - u(Slice{1, -1}) * 2 + u(Slice{2})) * 0.25);
          i = i + 1;
        },
        ag::state(u, i), {"u", "i"}, ag::SourceLoc(__FILE__, __LINE__));
    return u;
  };
  std::vector<double> init(64, 0.0);
  init[0] = 1.0;
  init[63] = -1.0;
  init[30] = 5.0;
  const ag::FunctionStats s = agtest::expect_three_way("heat", heat, {}, ag::constant(init), ag::constant(50));
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

// A box that fits while tracing (an unknown dim) but not at run time raises, and writes nothing.
TEST(JitIndexing, UpdateBoxOutOfRangeAtRunTime) {
  auto fn = [](Tensor x, Tensor v) { return x.at(Slice{2}).set(v); };
  auto f = ag::function(fn, {.input_signature = {ag::TensorSpec({-1}, ag::float32), ag::TensorSpec({-1}, ag::float32)},
                             .jit_compile = true});
  const Tensor x = ag::constant(std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(f(x, ag::constant(std::vector<float>{7, 8})).to_vector<float>(), (std::vector<float>{1, 2, 7, 8}));
  EXPECT_THROW(f(x, ag::constant(std::vector<float>{7, 8, 9})), ag::InvalidArgumentError);
  // Shorter than the box [2:]: the check, not a partial write.
  EXPECT_THROW(f(x, ag::constant(std::vector<float>{7})), ag::InvalidArgumentError);
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

}  // namespace
