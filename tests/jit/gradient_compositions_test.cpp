// Gradients through compositions of tapes, Functions and staged control flow: each case gives
// TensorFlow's value, eagerly (run_functions_eagerly), on the interpreter and compiled. Each
// test here failed before the compositions were fixed (issue 35): a nested Function under a
// traced tape, grad of grad, a repeated argument, a watched constant captured by a staged
// construct, unconnected sources, loop variables whose shape changes, a while body reading the
// TensorArray it carries, floormod.
#include "jit_test_util.h"

#include "ag/detail/tape.h"

namespace {

using ag::Tensor;

// fn's value eagerly (every Function runs its body), on the interpreter and compiled: the same.
template <class F, class... Args>
auto expect_three_way_eager_functions(const std::string& what, F fn, agtest::Tol tol, const Args&... args) {
  ag::run_functions_eagerly(true);
  auto eager = fn(args...);
  ag::run_functions_eagerly(false);
  auto interp = ag::function(fn, {.jit_compile = false});
  auto jit = ag::function(fn);
  agtest::expect_same(eager, interp(args...), tol, what + " [interpreter]");
  agtest::expect_same(eager, jit(args...), tol, what + " [jit]");
  return eager;
}

TEST(GradientCompositions, GradOfACallableThatCallsAFunction) {
  auto mm = ag::function([](Tensor a, Tensor b) { return ag::matmul(a, b); });
  auto df = ag::grad([&](Tensor a, Tensor b) { return ag::reduce_sum(mm(a, b)); });
  const Tensor a = ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}});
  const Tensor b = ag::constant({{0.5f, -1.0f}, {2.0f, 3.0f}});
  const Tensor expected = ag::matmul(ag::ones({2, 2}), ag::transpose(b));  // ones @ b^T
  EXPECT_TRUE(agtest::same_tensor(expected, df(a, b)));
  ag::run_functions_eagerly(true);
  const Tensor eager = df(a, b);
  ag::run_functions_eagerly(false);
  EXPECT_TRUE(agtest::same_tensor(expected, eager));
}

TEST(GradientCompositions, GradOfGrad) {
  auto d2 = ag::grad(ag::grad([](Tensor x) { return x * x * x; }));
  for (float x : {1.0f, -2.0f, 0.5f}) EXPECT_FLOAT_EQ(d2(Tensor(x)).item<float>(), 6 * x) << x;
  auto d3 = ag::grad(ag::grad(ag::grad([](Tensor x) { return ag::sin(x) * x; })));
  // d3/dx3 (x sin x) = -3 sin x - x cos x
  EXPECT_NEAR(d3(Tensor(0.7f)).item<float>(), -3 * std::sin(0.7f) - 0.7f * std::cos(0.7f), 1e-5);
  auto vg = ag::value_and_grad(ag::grad([](Tensor x) { return ag::reduce_sum(ag::exp(2.0f * x)); }));
  const auto [dx, ddx] = vg(ag::constant({0.0f, 1.0f}));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({2.0f, 2 * std::exp(2.0f)}), dx));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({4.0f, 4 * std::exp(2.0f)}), ddx));
}

TEST(GradientCompositions, ATensorPassedForTwoParametersIsTwoSources) {
  auto f = [](Tensor x, Tensor y) { return x * y * y; };
  const Tensor x(3.0f);
  for (bool eagerly : {false, true}) {
    ag::run_functions_eagerly(eagerly);
    auto g = ag::grad(f, ag::argnums<0, 1>);
    const auto [dx, dy] = g(x, x);  // (y^2, 2xy) at x = y = 3
    ag::run_functions_eagerly(false);
    EXPECT_FLOAT_EQ(dx.item<float>(), 9.0f) << eagerly;
    EXPECT_FLOAT_EQ(dy.item<float>(), 18.0f) << eagerly;
  }
  // A Function called under a tape with the same tensor twice: both paths reach it.
  auto h = ag::function(f);
  ag::GradientTape tape;
  tape.watch(x);
  EXPECT_FLOAT_EQ(tape.gradient(h(x, x), x).item<float>(), 27.0f);  // d/dx x^3
}

// A watched constant (captured by the traced lambda, so a constant of the graph) used in a
// staged if inside a staged while.
const Tensor kCaptured = ag::constant({0.5f, 2.0f});

std::tuple<Tensor, Tensor> captured_in_if_in_while(Tensor x, Tensor n) {
  ag::GradientTape tape;
  tape.watch(x);
  tape.watch(kCaptured);
  Tensor y = x, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   ag::if_stmt(ag::reduce_sum(y) > 0, [&] { y = y * kCaptured; }, [&] { y = y + kCaptured; },
                               ag::state(y), {"y"}, AG_SOURCE_LOC("captured.cpp", 3));
                   i += 1;
                 },
                 ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("captured.cpp", 1));
  const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(y), {x, kCaptured});
  return {g[0], g[1]};
}

TEST(GradientCompositions, AWatchedConstantUsedInAStagedIfInsideAStagedWhile) {
  // x = [1, -3]: y0 = [1, -3] (sum < 0) -> y + c = [1.5, -1] (> 0) -> y * c = [0.75, -2] (< 0)
  // -> y + c = [1.25, 0]: y = (x + c) c + c, dy/dx = c = [0.5, 2], dy/dc = x + 2c + 1 = [3, 2].
  agtest::expect_three_way("captured", captured_in_if_in_while, {}, ag::constant({1.0f, -3.0f}), Tensor(3));
  const auto [dx, dc] = captured_in_if_in_while(ag::constant({1.0f, -3.0f}), Tensor(3));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({0.5f, 2.0f}), dx));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({3.0f, 2.0f}), dc));
}

std::tuple<Tensor, Tensor> stop_gradient_in_a_while(Tensor x, Tensor c, Tensor n) {
  ag::GradientTape tape;
  tape.watch(x);
  tape.watch(c);
  Tensor y = x * c, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   y = y * ag::stop_gradient(c) + ag::stop_gradient(y) * c + ag::stop_gradient(x);
                   i += 1;
                 },
                 ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("stop.cpp", 1));
  const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(y), {x, c});
  return {g[0], g[1]};
}

TEST(GradientCompositions, StopGradientInsideAStagedWhileWithBroadcasting) {
  for (int n : {0, 1, 3}) {
    agtest::expect_three_way("x [2], c [1,2], n=" + std::to_string(n), stop_gradient_in_a_while, {},
                             ag::constant({0.5f, -0.25f}), ag::constant({{0.5f, 2.0f}}), Tensor(n));
    agtest::expect_three_way("x [1,2], c [2], n=" + std::to_string(n), stop_gradient_in_a_while, {},
                             ag::constant({{0.5f, -0.25f}}), ag::constant({0.5f, 2.0f}), Tensor(n));
  }
  const auto [dx, dc] = stop_gradient_in_a_while(ag::constant({0.5f, -0.25f}), ag::constant({{0.5f, 2.0f}}), Tensor(1));
  EXPECT_EQ(dx.shape(), ag::Shape({2}));
  EXPECT_EQ(dc.shape(), ag::Shape({1, 2}));
}

TEST(GradientCompositions, SourcesTheTargetDoesNotReachGetNone) {
  ag::Variable v(ag::constant({1.0f, 2.0f}), "v");
  // Read inside a staged while and a staged if whose results the target does not use.
  auto f = ag::function([&](Tensor x, Tensor n) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = x, u = x, i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     y = y * 2.0f;
                     u = u * v;
                     i += 1;
                   },
                   ag::state(y, u, i), {"y", "u", "i"}, AG_SOURCE_LOC("unconnected.cpp", 1));
    ag::if_stmt(ag::reduce_sum(x) > 0, [&] { u = u * v; }, [&] { u = u - v; }, ag::state(u), {"u"},
                AG_SOURCE_LOC("unconnected.cpp", 7));
    const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(y), {v, x});
    return std::tuple<Tensor, Tensor, Tensor>{u, Tensor(!g[0].has_value()), g[1]};
  });
  const auto [u, none, dx] = f(ag::constant({1.0f, 1.0f}), Tensor(2));
  EXPECT_TRUE(none.item<bool>()) << "a Variable the target does not depend on must give no gradient";
  EXPECT_TRUE(agtest::same_tensor(ag::constant({4.0f, 4.0f}), dx));
  // A Function called under an eager tape: its second output and second input are not connected.
  auto two = ag::function([&](Tensor x, Tensor y) { return std::tuple<Tensor, Tensor>{x * 2.0f, v * y}; });
  const Tensor x = ag::constant({1.0f, 1.0f}), y = ag::constant({3.0f, 4.0f});
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  tape.watch(y);
  const auto [a, b] = two(x, y);
  EXPECT_FALSE(tape.gradient(ag::reduce_sum(a), v).has_value());
  EXPECT_FALSE(tape.gradient(ag::reduce_sum(a), y).has_value());
  EXPECT_TRUE(agtest::same_tensor(ag::constant({3.0f, 4.0f}), tape.gradient(ag::reduce_sum(b), v)));
  // Zeros when asked.
  EXPECT_TRUE(agtest::same_tensor(ag::zeros({2}), tape.gradient(ag::reduce_sum(a), y, ag::UnconnectedGradients::zero)));
}

TEST(GradientCompositions, ATapeInsideATraceSeesNestedFunctionsSeveralLevelsDeep) {
  ag::Variable w(ag::constant({0.5f, -1.5f}), "w");
  auto inner = ag::function([&](Tensor x) { return ag::sin(x) * w; });
  auto middle = ag::function([&](Tensor x) { return inner(x * x) + x; });
  auto f = [&](Tensor x) {
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor y = ag::reduce_sum(middle(x));
    const std::vector<Tensor> g = tape.gradient(y, {x, w});
    return std::tuple<Tensor, Tensor>{g[0], g[1]};
  };
  const Tensor x = ag::constant({0.3f, 1.1f});
  const auto [dx, dw] = expect_three_way_eager_functions("nested", f, {}, x);
  const auto xv = x.to_vector<float>(), wv = w.value().to_vector<float>(), dxv = dx.to_vector<float>(), dwv = dw.to_vector<float>();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(dxv[i], std::cos(xv[i] * xv[i]) * 2 * xv[i] * wv[i] + 1, 1e-5);
    EXPECT_NEAR(dwv[i], std::sin(xv[i] * xv[i]), 1e-5);
  }
}

// Second order with both tapes inside the trace, through a nested Function.
Tensor second_order_through_a_function(Tensor x) {
  static auto cube = ag::function([](Tensor v) { return v * v * v; });
  return agtest::nested_tapes_second_derivative(x, cube);
}

TEST(GradientCompositions, NestedTapesInsideATraceThroughAFunction) {
  const Tensor x = ag::constant({1.0f, -2.0f});
  const Tensor d2 = expect_three_way_eager_functions("second order", second_order_through_a_function, {}, x);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({6.0f, -12.0f}), d2));
}

// y grows by one element per iteration: its shape changes across iterations.
Tensor a_loop_variable_that_grows(Tensor x, Tensor n) {
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = x, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   y = ag::concat({y, ag::sin(y[0] * x[0]) * ag::ones({1})}, 0);
                   i += 1;
                 },
                 ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("grows.cpp", 1));
  return tape.gradient(ag::reduce_sum(y * y), x);
}

TEST(GradientCompositions, ALoopVariableWhoseShapeChanges) {
  for (int n : {0, 1, 3}) {
    agtest::expect_three_way("n=" + std::to_string(n), a_loop_variable_that_grows, {}, ag::constant({0.5f}), Tensor(n));
    const Tensor g = a_loop_variable_that_grows(ag::constant({0.5f}), Tensor(n));
    // y = [x, sin(x^2) * k...]: n = 1: d/dx (x^2 + sin(x^2)^2) = 2x + 4x sin(x^2) cos(x^2)
    if (n == 1) {
      const float x = 0.5f;
      EXPECT_NEAR(g.item<float>(), 2 * x + 4 * x * std::sin(x * x) * std::cos(x * x), 1e-5);
    }
  }
}

// A while body that reads (and stacks, and sizes) the TensorArray it carries.
std::tuple<Tensor, Tensor> reads_the_array_it_carries(Tensor x, Tensor n) {
  ag::GradientTape tape;
  tape.watch(x);
  ag::TensorArray ta(x.dtype());
  ta.write(0, x);
  Tensor i = 1, s = ag::zeros({}, x.dtype());
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   const Tensor previous = ta.read(i - 1);
                   ta.write(i, ag::sin(previous) * x + ag::cast(ta.size(), x.dtype()) * 0.1);
                   s = s + ag::reduce_sum(ta.stack()) * 0.01;
                   i += 1;
                 },
                 ag::state(ta, i, s), {"ta", "i", "s"}, AG_SOURCE_LOC("reads.cpp", 1));
  const Tensor loss = ag::reduce_sum(ta.stack()) + s;
  return {loss, tape.gradient(loss, x)};
}

TEST(GradientCompositions, AWhileBodyReadingTheTensorArrayItCarries) {
  for (int n : {0, 1, 2, 5}) {
    agtest::expect_three_way("n=" + std::to_string(n), reads_the_array_it_carries, {}, ag::constant({0.5f, -1.0f}), Tensor(n));
    // The float64 gradient against central finite differences.
    const Tensor x = ag::constant({0.5, -1.0});
    const auto gradient = ag::function(reads_the_array_it_carries);
    const std::vector<double> g = std::get<1>(gradient(x, Tensor(n))).to_vector<double>();
    for (size_t e = 0; e < 2; ++e) {
      std::vector<double> up = x.to_vector<double>(), down = up;
      up[e] += 1e-6;
      down[e] -= 1e-6;
      const double fd = (std::get<0>(gradient(ag::constant(up, {2}), Tensor(n))).item<double>() -
                         std::get<0>(gradient(ag::constant(down, {2}), Tensor(n))).item<double>()) / 2e-6;
      EXPECT_NEAR(g[e], fd, 1e-5 * std::max(1.0, std::abs(fd))) << "n=" << n << " element " << e;
    }
  }
}

TEST(GradientCompositions, Floormod) {
  const Tensor x = ag::constant({5.5f, -3.25f}), y = ag::constant({2.0f, 1.5f});
  auto f = [](Tensor a, Tensor b) {
    ag::GradientTape tape;
    tape.watch(a);
    tape.watch(b);
    const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(ag::floormod(a, b)), {a, b});
    return std::tuple<Tensor, Tensor>{g[0], g[1]};
  };
  agtest::expect_three_way("floormod", f, {}, x, y);
  const auto [da, db] = f(x, y);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({1.0f, 1.0f}), da));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({-2.0f, 3.0f}), db));  // -floor(a / b)
}

TEST(GradientCompositions, ATapeInsideAStagedBranchOrLoopBodyWatchingAnOuterTensor) {
  auto in_branch = [](Tensor x) {
    const Tensor h = ag::exp(x);
    Tensor g;
    ag::if_stmt(ag::reduce_sum(x) > 0,
                [&] {
                  ag::GradientTape tape;
                  tape.watch(h);
                  g = tape.gradient(ag::reduce_sum(ag::sin(h) * x), h);
                },
                [&] { g = x * 0.0f; }, ag::state(g), {"g"}, AG_SOURCE_LOC("branch_tape.cpp", 1));
    return g;
  };
  const Tensor x = ag::constant({0.5f, 1.0f});
  agtest::expect_three_way("in a branch", in_branch, {}, x);
  EXPECT_TRUE(agtest::same_tensor(ag::cos(ag::exp(x)) * x, in_branch(x)));
  auto in_loop = [](Tensor x, Tensor n) {
    Tensor g = x * 0.0f, i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     ag::GradientTape tape;
                     tape.watch(x);
                     g = g + tape.gradient(ag::reduce_sum(ag::sin(x) * x * ag::cast(i, ag::float32)), x);
                     i += 1;
                   },
                   ag::state(g, i), {"g", "i"}, AG_SOURCE_LOC("loop_tape.cpp", 1));
    return g;
  };
  agtest::expect_three_way("in a loop body", in_loop, {}, x, Tensor(3));
}

// Second order with both tapes inside a staged branch, through a staged while: the while's
// gradient loops capture x through the branch, and the outer tape must see those captures.
Tensor second_order_in_a_branch(Tensor x, Tensor n) {
  Tensor g = ag::zeros_like(x);
  ag::if_stmt(ag::reduce_sum(ag::abs(n)) >= 0,
              [&] {
                ag::GradientTape outer;
                outer.watch(x);
                Tensor d;
                {
                  ag::GradientTape inner;
                  inner.watch(x);
                  Tensor y = x, i = 0;
                  ag::while_stmt([&] { return i < n; },
                                 [&] {
                                   y = ag::sin(y) * x;
                                   i += 1;
                                 },
                                 ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("branch_second.cpp", 9));
                  d = inner.gradient(ag::reduce_sum(y * y), x);
                }
                g = outer.gradient(ag::reduce_sum(d), x);
              },
              [&] {}, ag::state(g), {"g"}, AG_SOURCE_LOC("branch_second.cpp", 1));
  return g;
}

TEST(GradientCompositions, SecondOrderInsideAStagedBranchThroughAStagedWhile) {
  for (int n : {1, 2}) agtest::expect_three_way("n=" + std::to_string(n), second_order_in_a_branch, {}, ag::constant({0.5f, 1.5f}), Tensor(n));
  // n = 1: y = x sin x, d = 2 y (sin x + x cos x), the sum's derivative by hand.
  const float x = 0.5f, s = std::sin(x), c = std::cos(x), y = x * s, dy = s + x * c, d2y = 2 * c - x * s;
  EXPECT_NEAR(second_order_in_a_branch(ag::constant({x}), Tensor(1)).item<float>(), 2 * (dy * dy + y * d2y), 1e-5);
}

// A Function that captured a tensor (a constant of its graph), called under an eager tape that
// watches that tensor: in TensorFlow captures are inputs, so the tensor gets its gradient.
TEST(GradientCompositions, AnEagerTapeWatchingATensorAFunctionCaptured) {
  const Tensor c = ag::constant({0.5f, 2.0f});
  auto f = ag::function([&](Tensor x) { return ag::reduce_sum(ag::sin(x * c)); });
  const Tensor x = ag::constant({1.0f, -1.0f});
  f(x);
  ag::GradientTape tape;
  tape.watch(c);
  EXPECT_TRUE(agtest::same_tensor(ag::cos(x * c) * x, tape.gradient(f(x), c)));
}

}  // namespace
