// Loop-invariant code motion (passes/hoist_loop_invariants.cpp) in programs: what moves out of a
// staged loop moves (the optimized graph shows it), what may raise stays in a body that may run
// no iteration, and every result is the same eagerly, on the interpreter and compiled.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;

#define LOC(line) AG_SOURCE_LOC("licm.cpp", line)

// Nodes of op `op` at the top level of `g`, and inside its While nodes' sub-graphs.
int top_level(const ag::Graph& g, ag::OpKind op) {
  int n = 0;
  for (const ag::Node& node : g.nodes) n += node.op == op;
  return n;
}
int inside_loops(const ag::Graph& g, ag::OpKind op) {
  int n = 0;
  for (const ag::Node& node : g.nodes)
    if (node.op == ag::OpKind::While)
      for (const auto& sub : node.subgraphs) n += top_level(*sub, op) + inside_loops(*sub, op);
  return n;
}

// Gradient descent on sum((tanh(x) w)^2) in a staged loop: tanh of the loop-invariant x moves
// before the loop; the gradient's product reads it with transpose_a (no Transpose is made: a
// matmul's gradient is written with the flags).
Tensor descend(Tensor x, Tensor w, Tensor steps) {
  Tensor i = 0;
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   ag::GradientTape tape;
                   tape.watch(w);
                   Tensor loss = ag::reduce_sum(ag::square(ag::matmul(ag::tanh(x), w)));
                   w = w - 0.01f * tape.gradient(loss, w);
                   i += 1;
                 },
                 ag::state(w, i), {"w", "i"}, LOC(3));
  return w;
}

TEST(LoopInvariantCodeMotion, InvariantWorkOfAGradientLeavesTheLoop) {
  const Tensor x = agtest::sample(ag::float32, {6, 4}, 1, agtest::Values::Moderate) * 0.1f;
  const Tensor w = agtest::sample(ag::float32, {4, 3}, 2, agtest::Values::Moderate);
  agtest::expect_three_way("descend", descend, {1e-4, 1e-5}, x, w, Tensor(5));
  auto f = ag::function(descend);
  const ag::Graph& g = f.get_concrete_function(x, w, Tensor(5)).graph();
  EXPECT_EQ(inside_loops(g, ag::OpKind::Tanh), 0) << ag::graph_to_text(g);
  EXPECT_GE(top_level(g, ag::OpKind::Tanh), 1) << ag::graph_to_text(g);
  EXPECT_EQ(inside_loops(g, ag::OpKind::Transpose) + top_level(g, ag::OpKind::Transpose), 0) << ag::graph_to_text(g);
  EXPECT_GE(inside_loops(g, ag::OpKind::MatMul), 2) << "the matmuls read the loop var: " << ag::graph_to_text(g);
  EXPECT_NE(ag::graph_to_text(g).find("transpose_a"), std::string::npos) << ag::graph_to_text(g);
}

// A gather with an index out of range in a body that runs no iteration raises nothing: it may
// not move out of the body. When the body runs, every mode raises.
Tensor gather_in_body(Tensor x, Tensor idx, Tensor n) {
  Tensor acc = 0.0f, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   acc = acc + x[idx] * 2.0f;
                   i += 1;
                 },
                 ag::state(acc, i), {"acc", "i"}, LOC(20));
  return acc;
}

TEST(LoopInvariantCodeMotion, WhatMayRaiseStaysInABodyThatMayNotRun) {
  const Tensor x = ag::constant({1.0f, 2.0f, 3.0f});
  agtest::expect_three_way("no iteration, bad index", gather_in_body, {}, x, Tensor(7), Tensor(0));
  agtest::expect_three_way("two iterations", gather_in_body, {}, x, Tensor(2), Tensor(2));
  for (bool jit : {false, true}) {
    auto f = ag::function(gather_in_body, {.jit_compile = jit});
    agtest::expect_raises<ag::InvalidArgumentError>(f, {"index 7"}, x, Tensor(7), Tensor(2));
    const ag::Graph& g = f.get_concrete_function(x, Tensor(7), Tensor(2)).graph();
    EXPECT_EQ(top_level(g, ag::OpKind::Gather), 0) << ag::graph_to_text(g);
  }
  // Integer division by an invariant zero, likewise.
  auto divide = [](Tensor a, Tensor b, Tensor n) {
    Tensor acc = 0, i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     acc = acc + a / b;
                     i += 1;
                   },
                   ag::state(acc, i), {"acc", "i"}, LOC(40));
    return acc;
  };
  agtest::expect_three_way("division by zero, no iteration", divide, {}, Tensor(6), Tensor(0), Tensor(0));
  agtest::expect_three_way("division, three iterations", divide, {}, Tensor(7), Tensor(2), Tensor(3));
}

// The cond runs at least once: its invariants move whatever they are (here a reduction), and a
// loop var the body returns unchanged counts as invariant.
Tensor until_norm(Tensor x, Tensor scale, Tensor limit) {
  Tensor y = x;
  ag::while_stmt([&] { return ag::reduce_sum(y * y) < limit * ag::reduce_sum(x * x); },
                 [&] { y = y * scale + ag::exp(ag::reduce_mean(x)); },
                 ag::state(y), {"y"}, LOC(60));
  return y;
}

TEST(LoopInvariantCodeMotion, TheCondsInvariantsAndTheBodysMoveAndAgree) {
  const Tensor x = ag::constant({0.5f, -1.0f, 2.0f, 0.25f});
  agtest::expect_three_way("until_norm", until_norm, {1e-5, 1e-6}, x, Tensor(1.5f), Tensor(40.0f));
  auto f = ag::function(until_norm);
  const ag::Graph& g = f.get_concrete_function(x, Tensor(1.5f), Tensor(40.0f)).graph();
  EXPECT_EQ(inside_loops(g, ag::OpKind::ReduceMean), 0) << ag::graph_to_text(g);
  EXPECT_EQ(inside_loops(g, ag::OpKind::Exp), 0) << ag::graph_to_text(g);
  EXPECT_EQ(inside_loops(g, ag::OpKind::ReduceSum), 1) << "sum(y*y) reads the loop var: " << ag::graph_to_text(g);
}

// Under a tape outside the Function, and inside a trace, the gradient through a loop whose body
// the pass changed is the eager one.
TEST(LoopInvariantCodeMotion, GradientsThroughAHoistedLoopAgree) {
  const Tensor x = ag::constant({0.5f, -1.0f, 2.0f, 0.25f});
  auto loss_eager = [](Tensor x) { return ag::reduce_sum(until_norm(x, Tensor(1.5f), Tensor(40.0f))); };
  auto grad_of = [](auto&& loss, Tensor x) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor l = loss(x);
    return tape.gradient(l, x);
  };
  const Tensor want = grad_of(loss_eager, x);
  for (bool jit : {false, true}) {
    auto f = ag::function(loss_eager, {.jit_compile = jit});
    EXPECT_TRUE(agtest::same_tensor(want, grad_of(f, x), {1e-4, 1e-5})) << "tape outside, jit=" << jit;
    auto traced_grad = ag::function([&](Tensor x) { return grad_of(loss_eager, x); }, {.jit_compile = jit});
    EXPECT_TRUE(agtest::same_tensor(want, traced_grad(x), {1e-4, 1e-5})) << "tape inside, jit=" << jit;
  }
}

}  // namespace
