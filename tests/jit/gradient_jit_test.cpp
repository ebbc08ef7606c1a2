// Gradients in compiled code: a tape inside a traced function differentiates its graph, so the
// forward, the backward and an optimizer's update are one concrete function; eager ==
// interpreter == JIT. ag::grad / value_and_grad; a staged if's gradient; the errors for what is
// not supported yet; optimizers (SGD with momentum, Adam) eagerly and compiled, and the
// singleton rule for their slot variables.
#include "jit_test_util.h"

#include "ag/detail/tape.h"

namespace {

using ag::Tensor;

Tensor sin_times_x_grad(Tensor x) {
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::sin(x) * x + ag::reduce_sum(ag::tanh(x) * x);
  return tape.gradient(y, x);
}

TEST(JitGradients, ATapeInsideATracedFunction) {
  const Tensor x = ag::constant({0.5f, -1.25f, 2.0f, 0.0f});
  const auto stats = agtest::expect_three_way("d/dx (sin(x) x + sum(tanh(x) x))", sin_times_x_grad, {}, x);
  EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
}

// A two-layer MLP's loss and its gradient w.r.t. every parameter, one graph.
std::tuple<Tensor, Tensor, Tensor, Tensor> mlp_grads(Tensor x, Tensor y, Tensor w1, Tensor w2) {
  ag::GradientTape tape;
  tape.watch(w1);
  tape.watch(w2);
  const Tensor h = ag::relu(ag::matmul(x, w1));
  const Tensor logits = ag::matmul(h, w2);
  const Tensor loss = ag::reduce_mean(ag::square(logits - y));
  const std::vector<Tensor> g = tape.gradient(loss, {w1, w2});
  return {loss, g[0], g[1], ag::reduce_sum(h)};
}

TEST(JitGradients, AnMlpsLossAndGradientsAgreeOnEveryBackend) {
  const Tensor x = ag::random_uniform({8, 5}, ag::float32, -1, 1, 1);
  const Tensor y = ag::random_uniform({8, 3}, ag::float32, -1, 1, 2);
  const Tensor w1 = ag::random_uniform({5, 16}, ag::float32, -0.5, 0.5, 3);
  const Tensor w2 = ag::random_uniform({16, 3}, ag::float32, -0.5, 0.5, 4);
  agtest::expect_three_way("mlp", mlp_grads, {}, x, y, w1, w2);
}

Tensor through_a_staged_if(Tensor x) {
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y;
  ag::if_stmt(ag::reduce_sum(x) > 0, [&] { y = ag::exp(x) * x; }, [&] { y = ag::sin(x) * 3.0f; }, ag::state(y), {"y"},
              AG_SOURCE_LOC("if_grad.cpp", 3));
  return tape.gradient(y, x);
}

TEST(JitGradients, ThroughAStagedIf) {
  for (const Tensor& x : {ag::constant({0.5f, 1.0f}), ag::constant({-0.5f, -1.0f})})
    agtest::expect_three_way("if", through_a_staged_if, {}, x);
}

// A data-dependent staged while: y_{k+1} = sin(y_k) * x + c, n times; d/dx and d/dc (an invariant).
std::tuple<Tensor, Tensor, Tensor> through_a_staged_while(Tensor x, Tensor c, Tensor n) {
  ag::GradientTape tape;
  tape.watch(x);
  tape.watch(c);
  Tensor y = x, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   y = ag::sin(y) * x + c;
                   i += 1;
                 },
                 ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("while_grad.cpp", 7));
  // (Zero iterations: eagerly c is never used, so its gradient is None; a staged loop gives zeros,
  // as in TensorFlow. Ask for zeros to compare the backends.)
  const std::vector<Tensor> g = tape.gradient(ag::reduce_sum(y * y), {x, c}, ag::UnconnectedGradients::zero);
  return {y, g[0], g[1]};
}

TEST(JitGradients, ThroughAStagedWhileWithADataDependentTripCount) {
  const Tensor x = ag::constant({0.5f, -1.5f, 2.0f}), c = ag::constant(0.25f);
  for (int n : {0, 1, 4, 9}) agtest::expect_three_way("while n=" + std::to_string(n), through_a_staged_while, {}, x, c, Tensor(n));
}

// Variables read only inside staged constructs get their gradients (they are no node's input).
Tensor variable_inside_control_flow(ag::Variable& w, Tensor x, Tensor n) {
  ag::GradientTape tape;
  Tensor y = x, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   y = ag::tanh(y * w);
                   i += 1;
                 },
                 ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("var_grad.cpp", 3));
  ag::if_stmt(ag::reduce_sum(x) > 0, [&] { y = y * w; }, [&] { y = y - w; }, ag::state(y), {"y"},
              AG_SOURCE_LOC("var_grad.cpp", 9));
  return tape.gradient(ag::reduce_sum(y), w);
}

TEST(JitGradients, VariablesReadInsideStagedConstructs) {
  for (const Tensor& x : {ag::constant({0.5f, 1.0f}), ag::constant({-0.5f, -1.0f})}) {
    ag::Variable w_eager(ag::constant({0.75f, -1.25f}), "w"), w_interp(ag::constant({0.75f, -1.25f}), "w"),
        w_jit(ag::constant({0.75f, -1.25f}), "w");
    const Tensor eager = variable_inside_control_flow(w_eager, x, Tensor(3));
    auto interp = ag::function([&](Tensor a, Tensor n) { return variable_inside_control_flow(w_interp, a, n); },
                               {.jit_compile = false});
    auto jit = ag::function([&](Tensor a, Tensor n) { return variable_inside_control_flow(w_jit, a, n); });
    ASSERT_TRUE(eager.has_value());
    agtest::expect_same(eager, interp(x, Tensor(3)), {}, "interpreter");
    agtest::expect_same(eager, jit(x, Tensor(3)), {}, "jit");
  }
}

TEST(JitGradients, AStagedLoopWithSideEffectsIsNotDifferentiatedYet) {
  auto f = ag::function([](Tensor x, Tensor n) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = x, i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     ag::print("step", i);
                     y = y * x;
                     i += 1;
                   },
                   ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("while_print.cpp", 7));
    return tape.gradient(y, x);
  });
  agtest::expect_raises<ag::UnimplementedError>(f, {"staged while loop", "while_print.cpp:7", "side effects"},
                                                ag::constant(2.0f), Tensor(3));
}

// TensorArray writes, an overwrite, a read and a stack, differentiated inside the function.
Tensor through_a_tensor_array(Tensor x) {
  ag::GradientTape tape;
  tape.watch(x);
  ag::TensorArray ta(ag::float32);
  ta.write(0, ag::tanh(x));
  ta.write(1, x * x);
  ta.write(1, x * 3.0f);
  const Tensor first = ta.read(0);
  ta.write(3, ag::exp(x));
  const Tensor y = ag::reduce_sum(ta.stack() * ag::constant({{1.0f}, {2.0f}, {3.0f}, {4.0f}})) + ag::reduce_sum(first);
  return tape.gradient(y, x);
}

TEST(JitGradients, ThroughTensorArrays) {
  agtest::expect_three_way("tensor array", through_a_tensor_array, {}, ag::constant({0.5f, -1.0f, 2.0f}));
}

// The guide's dynamic_rnn, trained: a TensorArray accumulates the states in a staged loop whose
// trip count is the input's length; the loss reads the stacked states.
std::tuple<Tensor, Tensor> rnn_grads(Tensor input, Tensor w) {
  ag::GradientTape tape;
  tape.watch(w);
  ag::TensorArray states(ag::float32);
  Tensor state = ag::zeros({3});
  ag::for_stmt(ag::range(ag::shape_of(input)[0]), ag::no_extra_test,
               [&](Tensor i) {
                 state = ag::tanh(ag::matmul(ag::reshape(input[i] + state, {1, 3}), w)[0]);
                 states.write(i, state);
               },
               ag::state(state, states), {"state", "states"}, AG_SOURCE_LOC("rnn_grad.cpp", 5));
  const Tensor loss = ag::reduce_sum(ag::square(states.stack() - 0.5f));
  return {loss, tape.gradient(loss, w)};
}

TEST(JitGradients, ADynamicRnnThroughATensorArrayInAStagedLoop) {
  const Tensor w = ag::random_uniform({3, 3}, ag::float32, -0.8, 0.8, 5);
  for (int steps : {1, 2, 6})
    agtest::expect_three_way("rnn steps=" + std::to_string(steps), rnn_grads, {},
                             ag::random_uniform({steps, 3}, ag::float32, -1, 1, steps), w);
}

Tensor cube(Tensor x, Tensor scale) { return ag::reduce_sum(x * x * x) * scale; }

TEST(JitGradients, GradAndValueAndGrad) {
  auto d_cube = ag::grad(cube);
  const Tensor x = ag::constant({1.0f, -2.0f});
  EXPECT_TRUE(agtest::same_tensor(ag::constant({6.0f, 24.0f}), d_cube(x, ag::constant(2.0f))));
  auto both = ag::value_and_grad(cube, ag::argnums<0, 1>);
  const auto [value, dx, dscale] = both(x, ag::constant(2.0f));
  EXPECT_FLOAT_EQ(value.item<float>(), -14.0f);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({6.0f, 24.0f}), dx));
  EXPECT_FLOAT_EQ(dscale.item<float>(), -7.0f);
  EXPECT_EQ(d_cube.stats().compiles + d_cube.stats().disk_hits, 1);
  EXPECT_NE(d_cube.name().find("grad("), std::string::npos) << d_cube.name();
  // Backward nodes carry the line of the forward op they differentiate, not agc's rule files.
  const std::string text = d_cube.get_concrete_function(x, ag::constant(2.0f)).graph_text();
  for (const char* internal : {"rules_", "tape.cpp", "gradients.h"})
    EXPECT_EQ(text.find(internal), std::string::npos) << internal << "\n" << text;
  EXPECT_NE(text.find("gradient_jit_test.cpp:"), std::string::npos) << text;
}

// A Function compiled by the JIT, called under an eager tape: one op on the tape, whose gradient
// is a compiled backward Function (traced once per forward signature).
TEST(JitGradients, ACompiledFunctionCalledUnderATapeIsOneOpWithACompiledBackward) {
  ag::Variable w(ag::constant({1.0f, 2.0f}), "w");
  auto f = ag::function([&](Tensor x) { return ag::reduce_sum(w * x * x); });
  const Tensor x = ag::constant({3.0f, -1.0f});
  EXPECT_FLOAT_EQ(f(x).item<float>(), 11.0f);  // compiled first
  for (int call = 0; call < 3; ++call) {
    const uint64_t runs = ag::detail::call_backward_runs(), recorded = ag::detail::call_backward_recorded_runs();
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor y = f(x);  // the forward half of the pair: the outputs and the residuals
    EXPECT_FLOAT_EQ(y.item<float>(), 11.0f);
    const std::vector<Tensor> g = tape.gradient(y, {x, w});
    EXPECT_EQ(ag::detail::call_backward_runs(), runs + 1) << "the backward function did not run";
    EXPECT_EQ(ag::detail::call_backward_recorded_runs(), recorded) << "the backward recomputed the forward";
    EXPECT_TRUE(agtest::same_tensor(ag::constant({6.0f, -4.0f}), g[0])) << g[0].str();
    EXPECT_TRUE(agtest::same_tensor(ag::constant({9.0f, 1.0f}), g[1])) << g[1].str();
  }
  EXPECT_EQ(f.tracing_count(), 1);
  // Second order through the call: the backward runs as a Function call, recorded in turn.
  const uint64_t recorded = ag::detail::call_backward_recorded_runs();
  ag::GradientTape outer;
  outer.watch(x);
  Tensor dx;
  {
    ag::GradientTape inner;
    inner.watch(x);
    dx = inner.gradient(f(x), x);  // 2 w x
  }
  EXPECT_TRUE(agtest::same_tensor(ag::constant({2.0f, 4.0f}), outer.gradient(dx, x))) << "d2/dx2 = 2 w";
  EXPECT_EQ(ag::detail::call_backward_recorded_runs(), recorded + 1);
}

// A Function with a side effect runs op by op under a tape (its backward would repeat the print).
TEST(JitGradients, AFunctionWithSideEffectsUnderATapeRunsOpByOp) {
  auto f = ag::function([](Tensor x) {
    ag::print("called");
    return ag::reduce_sum(ag::exp(x));
  });
  std::string printed;
  ag::set_print_sink([&](std::string_view s) { printed += s; });
  const Tensor x = ag::constant({0.0f, 1.0f});
  const uint64_t runs = ag::detail::call_backward_runs();
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor g = tape.gradient(f(x), x);
  ag::set_print_sink(nullptr);
  EXPECT_EQ(ag::detail::call_backward_runs(), runs);
  EXPECT_TRUE(agtest::same_tensor(ag::exp(x), g)) << g.str();
  EXPECT_EQ(printed, "called\n");
}

// The guide's train_step: forward, backward and the optimizer's update in one Function.
std::vector<float> train(ag::optimizers::Optimizer& opt, bool compiled, int steps) {
  ag::Variable w(ag::constant({0.5f, -0.5f}), "w");
  const Tensor x = ag::constant({{1.0f, 2.0f}, {3.0f, -1.0f}, {0.5f, 0.5f}});
  const Tensor y = ag::constant({1.0f, 2.0f, 0.5f});
  auto step = [&](Tensor xs, Tensor ys) {
    ag::GradientTape tape;
    const Tensor pred = ag::reduce_sum(xs * w, 1);
    const Tensor loss = ag::reduce_mean(ag::square(pred - ys));
    opt.apply_gradients({{tape.gradient(loss, w), &w}});
    return loss;
  };
  std::vector<float> losses;
  if (compiled) {
    auto f = ag::function(step);
    for (int i = 0; i < steps; ++i) losses.push_back(f(x, y).item<float>());
    EXPECT_EQ(f.tracing_count(), 1);
  } else {
    for (int i = 0; i < steps; ++i) losses.push_back(step(x, y).item<float>());
  }
  for (float v : w.value().to_vector<float>()) losses.push_back(v);
  return losses;
}

TEST(JitGradients, TrainStepsWithSgdAndAdamAgreeEagerAndCompiled) {
  for (int which : {0, 1, 2}) {
    auto make = [&]() -> std::unique_ptr<ag::optimizers::Optimizer> {
      if (which == 0) return std::make_unique<ag::optimizers::SGD>(0.05);
      if (which == 1) return std::make_unique<ag::optimizers::SGD>(0.05, 0.9);
      return std::make_unique<ag::optimizers::Adam>(0.1);
    };
    auto eager_opt = make(), jit_opt = make();
    const std::vector<float> eager = train(*eager_opt, false, 20), jit = train(*jit_opt, true, 20);
    ASSERT_EQ(eager.size(), jit.size());
    for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(eager[i], jit[i], 1e-5 * std::max(1.0f, std::abs(eager[i]))) << which << " " << i;
    EXPECT_LT(eager[19], eager[0] * 0.5f) << "optimizer " << which << " did not reduce the loss";
  }
}

TEST(JitGradients, SlotVariablesFollowTheSingletonRule) {
  // The guide: one Function traced with two optimizers creates the second's slots on a later trace.
  ag::optimizers::Adam adam(0.1);
  ag::optimizers::SGD sgd(0.1, 0.9);
  ag::Variable w(ag::constant({1.0f}), "w");
  auto f = ag::function([&](Tensor x, int which) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_sum(ag::square(w * x));
    const Tensor g = tape.gradient(loss, w);
    if (which == 0) adam.apply_gradients({{g, &w}});
    else sgd.apply_gradients({{g, &w}});
    return loss;
  });
  f(ag::constant({2.0f}), 0);
  agtest::expect_raises<ag::ValueError>(f, {"on a later trace"}, ag::constant({2.0f}), 1);
}

}  // namespace
