// The basics (the guides' "Usage" and "Converting functions to graphs"): a Function is called
// like the C++ function it wraps and gives the same results; Functions call Functions (the inner
// graph is inlined); plain C++ helpers called while tracing are traced into the graph; tensor
// control flow (with ag-rewrite) and Variables are captured too.
#include <ag/ag.h>

using ag::Tensor;

// tf.function's own example: f and its Function return the same value.
Tensor f(Tensor x, Tensor y) { return ag::reduce_mean(ag::pow(x, 2) * 3 + y); }

// "Functions inside other Functions".
Tensor add(Tensor a, Tensor b) { return a + b; }

// "Converting Python functions to graphs": a plain function called by a traced one.
Tensor inner_function(Tensor x, Tensor y, Tensor b) { return ag::matmul(x, y) + b; }

Tensor outer_function(Tensor x) {
  Tensor y = ag::constant({{2.f}, {3.f}});
  Tensor b = ag::constant(4.f);
  return inner_function(x, y, b);  // traced into outer_function's graph
}

// Data-dependent control flow is captured in the graph too.
AG_FUNCTION Tensor g(Tensor x) {
  if (ag::reduce_sum(x) > 0) return x * x;
  return ag::floordiv(-x, 2);
}

int main() {
  Tensor x = ag::constant({{2.f, 3.f}});
  Tensor y = ag::constant({{3.f, -2.f}});
  auto f_graph = ag::function(f, {.name = "f"});
  fmt::print("f(x, y) = {} eagerly, {} as a graph\n", f(x, y).item<float>(), f_graph(x, y).item<float>());

  // Tensors used by a lambda are captured into the graph as constants.
  auto h = ag::function([&] { return f(x, y); }, {.name = "h"});
  fmt::print("h() = {}\n", h().item<float>());

  auto add_fn = ag::function(add, {.name = "add"});
  fmt::print("add(ones, ones) = {}\n", add_fn(ag::ones({2, 2}), ag::ones({2, 2})));
  auto dense_layer = ag::function(
      [&](Tensor x, Tensor w, Tensor b) { return add_fn(ag::matmul(x, w), b); }, {.name = "dense_layer"});
  fmt::print("dense_layer(ones[3,2], ones[2,2], ones[2]) = {}\n",
             dense_layer(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2})));
  fmt::print("add was traced {} time(s) (once on its own, once inside dense_layer)\n", add_fn.tracing_count());
  fmt::print("dense_layer's graph has add inlined:\n{}\n",
             dense_layer.get_concrete_function(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2})).graph_text());

  auto outer = ag::function(outer_function, {.name = "outer_function"});
  fmt::print("outer_function([[1 2]]) = {}\n", outer(ag::constant({{1.f, 2.f}})));
  fmt::print("{}\n", outer.get_concrete_function(ag::constant({{1.f, 2.f}})).graph_text());

  auto g_fn = ag::function(g, {.name = "g"});
  Tensor positive = g_fn(ag::constant({1, 2}));
  Tensor negative = g_fn(ag::constant({-1, -2}));
  fmt::print("g([1 2]) = {}, g([-1 -2]) = {}, traced {} time(s)\n", positive, negative, g_fn.tracing_count());

  // Variables are captured by reference: the graph reads and updates the live value.
  ag::Variable c(0, "c");
  auto counted = ag::function(
      [&](Tensor v) {
        c.assign_add(1);
        return v + ag::cast(c.read_value(), ag::float32);
      },
      {.name = "counted"});
  for (int i = 0; i < 2; ++i) {
    Tensor r = counted(Tensor(1.f));
    fmt::print("counted(1.0) = {}, c = {}\n", r.item<float>(), c.value().item<int>());
  }
  return 0;
}
// OUT: f(x, y) = 20 eagerly, 20 as a graph
// OUT-NEXT: h() = 20
// OUT-NEXT: add(ones, ones) = tf.Tensor(
// OUT: dense_layer(ones[3,2], ones[2,2], ones[2]) = tf.Tensor(
// OUT: add was traced 2 time(s)
// OUT: dense_layer's graph has add inlined:
// OUT-NEXT: graph dense_layer(
// OUT-NEXT: MatMul
// OUT-NEXT: Add
// OUT-NEXT: return
// OUT: outer_function({{\[\[}}1 2]]) = tf.Tensor({{\[\[}}12.]], shape=(1, 1), dtype=float32)
// OUT-NEXT: graph outer_function(
// OUT: MatMul
// OUT: Add
// OUT: g([1 2]) = tf.Tensor([1 4], shape=(2,), dtype=int32), g([-1 -2]) = tf.Tensor([0 1], shape=(2,), dtype=int32), traced 1 time(s)
// OUT-NEXT: counted(1.0) = 2, c = 1
// OUT-NEXT: counted(1.0) = 3, c = 2
