// TensorFlow's gradient API beyond gradient(): custom_gradient, recompute_grad, jacobian,
// batch_jacobian, stop_recording, reset, watched_variables, watch_accessed_variables, and a
// persistent tape differentiating its own gradient. Each eagerly, on the interpreter and
// compiled, with TensorFlow's values; custom gradients also through a Function called under an
// eager tape (whose backward replays the traced graph) and inside a staged loop.
#include "jit_test_util.h"

#include <cmath>

namespace {

using ag::Tensor;

// TensorFlow's example: log(1 + e^x), whose plain gradient is NaN at x = 100 in float32.
const auto log1pexp = ag::custom_gradient([](Tensor x) {
  const Tensor e = ag::exp(x);
  auto grad = [e](Tensor dy) { return dy * (1 - 1 / (1 + e)); };
  return std::pair{ag::log(1 + e), grad};
});

Tensor log1pexp_grad(Tensor x) {
  ag::GradientTape tape;
  tape.watch(x);
  return tape.gradient(ag::reduce_sum(log1pexp(x)), x);
}

TEST(CustomGradient, TensorFlowsLog1pexpExample) {
  const Tensor x = ag::constant({0.0f, 100.0f});
  agtest::expect_three_way("log1pexp", log1pexp_grad, {}, x);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({0.5f, 1.0f}), log1pexp_grad(x)));
  // The forward's own gradient is NaN at 100: the custom one replaced it.
  ag::GradientTape tape;
  tape.watch(x);
  EXPECT_TRUE(std::isnan(tape.gradient(ag::reduce_sum(ag::log(1 + ag::exp(x))), x).to_vector<float>()[1]));
}

TEST(CustomGradient, AFunctionCalledUnderAnEagerTapeUsesIt) {
  auto f = ag::function([](Tensor x) { return ag::reduce_sum(log1pexp(x) * 2.0f); });
  const Tensor x = ag::constant({0.0f, 100.0f});
  f(x);  // traced and compiled without a tape
  ag::GradientTape tape;
  tape.watch(x);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({1.0f, 2.0f}), tape.gradient(f(x), x)));
  // The optimized graph runs the forward only: the node is stripped before the backend.
  EXPECT_EQ(f.get_concrete_function(x).graph_text().find("CustomGradient"), std::string::npos);
}

TEST(CustomGradient, InsideAStagedLoopAndWithGrad) {
  auto loop = [](Tensor x, Tensor n) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = x, i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     y = log1pexp(y) + x;
                     i += 1;
                   },
                   ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("custom_loop.cpp", 1));
    return tape.gradient(ag::reduce_sum(y), x);
  };
  for (int n : {0, 1, 3}) agtest::expect_three_way("loop n=" + std::to_string(n), loop, {}, ag::constant({0.5f, 50.0f}), Tensor(n));
  auto g = ag::grad([](Tensor x) { return ag::reduce_sum(log1pexp(x)); });
  EXPECT_TRUE(agtest::same_tensor(ag::constant({0.5f, 1.0f}), g(ag::constant({0.0f, 100.0f}))));
}

TEST(CustomGradient, SecondOrderDifferentiatesTheGradientFunction) {
  // The gradient function's ops are recorded by the outer tape: d/dx (1 - 1/(1 + e^x)) = s (1 - s).
  auto f = [](Tensor x) { return agtest::nested_tapes_second_derivative(x, log1pexp); };
  const Tensor x = ag::constant({0.0f, 1.0f});
  agtest::expect_three_way("second order", f, {}, x);
  EXPECT_TRUE(agtest::same_tensor(ag::sigmoid(x) * (1 - ag::sigmoid(x)), f(x)));
}

TEST(CustomGradient, SeveralInputsAndOutputsAndNone) {
  // (x * y, x + y) with a gradient that gives y none.
  const auto pair_op = ag::custom_gradient([](Tensor x, Tensor y) {
    auto grad = [x, y](Tensor d_product, Tensor d_sum) { return std::tuple{d_product * y * 10.0f + d_sum, Tensor()}; };
    return std::pair{std::tuple{x * y, x + y}, grad};
  });
  auto f = [&](Tensor x, Tensor y) {
    ag::GradientTape tape;
    tape.watch(x);
    tape.watch(y);
    const auto [p, s] = pair_op(x, y);
    const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(p) + ag::reduce_sum(s), {x, y});
    return std::tuple{p, g[0], Tensor(!g[1].has_value())};
  };
  const Tensor x = ag::constant({1.0f, 2.0f}), y = ag::constant({3.0f, -1.0f});
  agtest::expect_three_way("pair", f, {}, x, y);
  const auto [p, dx, y_none] = f(x, y);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({3.0f, -2.0f}), p));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({31.0f, -9.0f}), dx));
  EXPECT_TRUE(y_none.item<bool>());
}

TEST(CustomGradient, VariablesNeedAGradientFunctionThatTakesThem) {
  ag::Variable w(ag::constant({2.0f, -1.0f}), "w");
  const auto scaled = ag::custom_gradient([&](Tensor x) {
    auto grad = [x](Tensor dy, const std::vector<ag::Variable>& variables) {
      EXPECT_EQ(variables.size(), 1u);
      // The true gradients, times 3 for w (a custom rule must be the one used).
      return std::pair{dy * variables[0].value(), std::vector<Tensor>{dy * x * 3.0f}};
    };
    return std::pair{x * w, grad};
  });
  auto f = [&](Tensor x) {
    ag::GradientTape tape;
    tape.watch(x);
    const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(scaled(x)), {x, w});
    return std::tuple{g[0], g[1]};
  };
  const Tensor x = ag::constant({0.5f, 4.0f});
  agtest::expect_three_way("variables", f, {}, x);
  const auto [dx, dw] = f(x);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({2.0f, -1.0f}), dx));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({1.5f, 12.0f}), dw));
  // A gradient function that does not take the Variables: TensorFlow's TypeError, at the call.
  const auto forgets = ag::custom_gradient([&](Tensor x) { return std::pair{x * w, [](Tensor dy) { return dy; }}; });
  try {
    forgets(x);
    ADD_FAILURE() << "no error";
  } catch (const ag::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("std::vector<ag::Variable>"), std::string::npos) << e.what();
  }
}

TEST(CustomGradient, AGradientOfTheWrongShapeIsAValueError) {
  const auto bad = ag::custom_gradient([](Tensor x) { return std::pair{x * 2.0f, [](Tensor dy) { return ag::reduce_sum(dy); }}; });
  ag::GradientTape tape;
  const Tensor x = ag::constant({1.0f, 2.0f});
  tape.watch(x);
  const Tensor y = bad(x);
  auto backward = [&] { return tape.gradient(ag::reduce_sum(y), x); };
  agtest::expect_raises<ag::ValueError>(backward, {"custom_gradient", "input 0"});
}

Tensor mlp_layer(Tensor x, Tensor w) { return ag::tanh(ag::matmul(x, w)) * 2.0f; }

TEST(RecomputeGrad, SameGradientAsTheFunctionItself) {
  const auto remat = ag::recompute_grad(mlp_layer);
  ag::Variable v(ag::constant({0.5f, -0.25f, 1.0f}), "v");
  auto f = [&](Tensor x, Tensor w, bool recompute) {
    ag::GradientTape tape;
    tape.watch(w);
    const Tensor h = recompute ? remat(x, w) : mlp_layer(x, w);
    const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(h * v), {w, v});
    return std::tuple{g[0], g[1]};
  };
  const Tensor x = ag::random_uniform({4, 2}, ag::float32, -1, 1, 1), w = ag::random_uniform({2, 3}, ag::float32, -1, 1, 2);
  agtest::expect_three_way("recompute", f, {}, x, w, true);
  agtest::expect_same(f(x, w, false), f(x, w, true), {}, "recompute == plain");
  // A Variable read inside the recomputed function gets its gradient.
  const auto with_variable = ag::recompute_grad([&](Tensor a) { return ag::sin(a) * v; });
  ag::GradientTape tape;
  const Tensor a = ag::constant({0.1f, 0.2f, 0.3f});
  tape.watch(a);
  const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(with_variable(a)), {a, v});
  EXPECT_TRUE(agtest::same_tensor(ag::cos(a) * v.value(), g[0]));
  EXPECT_TRUE(agtest::same_tensor(ag::sin(a), g[1]));
}

TEST(Jacobian, OfAVectorAndOfAMatrixProduct) {
  auto f = [](Tensor x, Tensor w) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    const Tensor y = x * x;                      // [3]
    const Tensor z = ag::matmul(w, ag::reshape(x, {3, 1}));  // [2, 1]
    return std::tuple{tape.jacobian(y, x), tape.jacobian(z, x)};
  };
  const Tensor x = ag::constant({1.0f, -2.0f, 0.5f});
  const Tensor w = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.0f, 4.0f}});
  agtest::expect_three_way("jacobian", f, {}, x, w);
  const auto [jy, jz] = f(x, w);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({{2.0f, 0.0f, 0.0f}, {0.0f, -4.0f, 0.0f}, {0.0f, 0.0f, 1.0f}}), jy));
  EXPECT_EQ(jz.shape(), ag::Shape({2, 1, 3}));
  EXPECT_TRUE(agtest::same_tensor(ag::reshape(w, {2, 1, 3}), jz));
  // Unknown dims (an input_signature): the staged loop runs over the elements at run time.
  auto g = [](Tensor x) {
    ag::GradientTape tape;
    tape.watch(x);
    return tape.jacobian(ag::sin(x) * x, x);
  };
  auto unknown = ag::function(g, {.input_signature = {ag::TensorSpec({-1}, ag::float32)}});
  for (const Tensor& v : {x, ag::constant({0.25f})}) EXPECT_TRUE(agtest::same_tensor(g(v), unknown(v)));
}

TEST(Jacobian, UnconnectedSourcesAndAScalarTarget) {
  const Tensor x = ag::constant({1.0f, 2.0f}), u = ag::constant({3.0f});
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  tape.watch(u);
  const Tensor y = ag::reduce_sum(x * x);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({2.0f, 4.0f}), tape.jacobian(y, x)));
  EXPECT_FALSE(tape.jacobian(y, u).has_value());
  EXPECT_TRUE(agtest::same_tensor(ag::zeros({1}), tape.jacobian(y, u, ag::UnconnectedGradients::zero)));
  // A non-persistent tape: one jacobian.
  ag::GradientTape once;
  once.watch(x);
  const Tensor z = x * 3.0f;
  once.jacobian(z, x);
  auto again = [&] { return once.jacobian(z, x); };
  agtest::expect_raises<ag::ValueError>(again, {"non-persistent"});
}

TEST(Jacobian, BatchJacobian) {
  // y[b, i] = x[b, i]^2 * w[i] + x[b, 0]: per row, diag(2 x w) plus a first column of ones.
  auto f = [](Tensor x, Tensor w) {
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor y = x * x * w + ag::slice(x, {0, 0}, {-1, 1});
    return tape.batch_jacobian(y, x);
  };
  const Tensor x = ag::constant({{1.0f, 2.0f}, {-1.0f, 0.5f}, {3.0f, 1.0f}}), w = ag::constant({2.0f, -1.0f});
  agtest::expect_three_way("batch_jacobian", f, {}, x, w);
  const Tensor j = f(x, w);
  ASSERT_EQ(j.shape(), ag::Shape({3, 2, 2}));
  EXPECT_TRUE(agtest::same_tensor(ag::constant({{{5.0f, 0.0f}, {1.0f, -4.0f}},
                                                {{-3.0f, 0.0f}, {1.0f, -1.0f}},
                                                {{13.0f, 0.0f}, {1.0f, -2.0f}}}),
                                  j));
}

TEST(GradientTapeApi, StopRecordingAndReset) {
  auto f = [](Tensor x) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    Tensor s;
    {
      auto paused = tape.stop_recording();
      s = ag::sin(x);  // not recorded: no gradient through sin
    }
    const Tensor y = x * x + s;
    const Tensor g = tape.gradient(ag::reduce_sum(y), x);
    tape.reset();
    tape.watch(x);
    const Tensor z = ag::exp(x);
    const Tensor after_reset = tape.gradient(ag::reduce_sum(z), x);
    const bool forgotten = !tape.gradient(ag::reduce_sum(y), x).has_value();
    return std::tuple{g, after_reset, Tensor(forgotten)};
  };
  const Tensor x = ag::constant({0.5f, -1.0f});
  agtest::expect_three_way("stop_recording, reset", f, {}, x);
  const auto [g, after_reset, forgotten] = f(x);
  EXPECT_TRUE(agtest::same_tensor(2 * x, g));
  EXPECT_TRUE(agtest::same_tensor(ag::exp(x), after_reset));
  EXPECT_TRUE(forgotten.item<bool>());
}

TEST(GradientTapeApi, WatchedVariablesAndWatchAccessedVariables) {
  ag::Variable a(ag::constant(1.0f), "a"), b(ag::constant(2.0f), "b"), c(ag::constant(3.0f), "c");
  {
    ag::GradientTape tape;
    const Tensor y = b * a + b;
    const std::vector<ag::Variable> watched = tape.watched_variables();
    ASSERT_EQ(watched.size(), 2u);
    EXPECT_EQ(watched[0].name(), "b");
    EXPECT_EQ(watched[1].name(), "a");
    EXPECT_FLOAT_EQ(tape.gradient(y, b).item<float>(), 2.0f);
  }
  auto f = [&](Tensor x) {
    ag::GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
    tape.watch(c);
    const Tensor y = a * x + c * x;
    const std::vector<Tensor> g = tape.gradient(y, {a, c});
    return std::tuple{Tensor(!g[0].has_value()), g[1], Tensor(static_cast<int32_t>(tape.watched_variables().size()))};
  };
  agtest::expect_three_way("watch_accessed_variables", f, {}, Tensor(5.0f));
  const auto [a_none, dc, count] = f(Tensor(5.0f));
  EXPECT_TRUE(a_none.item<bool>()) << "a was read but not watched";
  EXPECT_FLOAT_EQ(dc.item<float>(), 5.0f);
  EXPECT_EQ(count.item<int32_t>(), 1);
}

TEST(GradientTapeApi, APersistentTapeDifferentiatesItsOwnGradient) {
  // TensorFlow's testHigherOrderGradient: x^3 at 3 -> 27, 18, 6.
  auto f = [](Tensor x) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    const Tensor y = x * x * x;
    const Tensor z = tape.gradient(y, x);
    const Tensor zz = tape.gradient(z, x);
    const Tensor zzz = tape.gradient(zz, x);
    return std::tuple{z, zz, zzz};
  };
  agtest::expect_three_way("higher order", f, {}, Tensor(3.0f));
  const auto [z, zz, zzz] = f(Tensor(3.0f));
  EXPECT_FLOAT_EQ(z.item<float>(), 27.0f);
  EXPECT_FLOAT_EQ(zz.item<float>(), 18.0f);
  EXPECT_FLOAT_EQ(zzz.item<float>(), 6.0f);
  // A non-persistent tape records nothing after its gradient: an outer tape sees its backward.
  ag::GradientTape outer;
  const Tensor x(2.0f);
  outer.watch(x);
  Tensor dx;
  {
    ag::GradientTape inner;
    inner.watch(x);
    dx = inner.gradient(x * x * x, x);
  }
  EXPECT_FLOAT_EQ(outer.gradient(dx, x).item<float>(), 12.0f);
}

}  // namespace
