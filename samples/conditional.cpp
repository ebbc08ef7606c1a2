// Conditionals (the guides' `conditional` and `simple_relu`): an if on a tensor condition is
// staged into the graph — both branches are traced, the condition picks one at run time.
// `./run.sh conditional` also shows what ag-rewrite made of this file.
#include <ag/ag.h>

#include <cstdio>

using ag::Tensor;

AG_FUNCTION Tensor conditional(Tensor x) {
  if (ag::reduce_sum(x) > 0) {
    std::printf("Tracing the then branch\n");
    return ag::abs(x);
  } else {
    std::printf("Tracing the else branch\n");
    return ag::square(x);
  }
}

AG_FUNCTION Tensor simple_relu(Tensor x) {
  if (x > 0) return x;
  return Tensor(0.f);
}

int main() {
  auto f = ag::function(conditional);
  fmt::print("conditional([1 -2 3]) = {}\n", f(ag::constant({1.f, -2.f, 3.f})));
  fmt::print("conditional([-1 -2 3]) = {}\n", f(ag::constant({-1.f, -2.f, 0.5f})));
  fmt::print("tracing_count: {}\n\n", f.tracing_count());

  auto relu = ag::function(simple_relu);
  fmt::print("simple_relu(3) = {}\n", relu(ag::Tensor(3.f)));
  fmt::print("simple_relu(-3) = {}\n", relu(ag::Tensor(-3.f)));
  fmt::print("\nThe graph of simple_relu:\n{}", relu.get_concrete_function(ag::Tensor(1.f)).graph_text());
  return 0;
}
// OUT: Tracing the then branch
// OUT-NEXT: Tracing the else branch
// OUT-NEXT: conditional([1 -2 3]) = tf.Tensor([1. 2. 3.], shape=(3,), dtype=float32)
// OUT-NEXT: conditional([-1 -2 3]) = tf.Tensor([1. 4. 0.25], shape=(3,), dtype=float32)
// OUT-NEXT: tracing_count: 1
// OUT: simple_relu(3) = tf.Tensor(3.0, shape=(), dtype=float32)
// OUT-NEXT: simple_relu(-3) = tf.Tensor(0.0, shape=(), dtype=float32)
// OUT: If(
