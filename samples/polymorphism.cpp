// Polymorphism (the guide's my_relu): a Function makes a concrete function per input signature.
// TensorFlow's my_relu takes a tensor or a Python list in the same parameter. A C++ parameter has
// one type, so the list call goes to a second Function, my_relu_list(std::vector<float>), which
// converts the list with ag::constant and applies my_relu. Its list is part of its signature by
// value (TensorFlow's List[Literal[1], Literal[-1]]), so the guide's three concrete functions are
// printed by the two Functions: my_relu's two, then my_relu_list's one. (Parameters print as
// arg0: the rewriter records parameter names only for functions it converts.)
#include <ag/ag.h>

ag::Tensor my_relu(ag::Tensor x) { return ag::maximum(0.f, x); }

ag::Tensor my_relu_list(std::vector<float> x) { return my_relu(ag::constant(x)); }

int main() {
  auto f = ag::function(my_relu, {.name = "my_relu"});
  auto f_list = ag::function(my_relu_list, {.name = "my_relu_list"});
  // `my_relu` creates new graphs as it observes different input types.
  fmt::print("{}\n", f(ag::constant(5.5f)));
  fmt::print("{}\n", f_list({1, -1}));
  fmt::print("{}\n", f(ag::constant({3.f, -3.f})));

  // These two calls do *not* create new graphs.
  fmt::print("{}\n", f(ag::constant(-2.5f)));         // Input type matches `ag::constant(5.5f)`.
  fmt::print("{}\n", f(ag::constant({-1.f, 1.f})));  // Input type matches `ag::constant({3.f, -3.f})`.

  // There are three concrete functions (one for each graph); each knows its return type and shape.
  fmt::print("\n{}{}", f.pretty_printed_concrete_signatures(), f_list.pretty_printed_concrete_signatures());
  return 0;
}
// OUT: tf.Tensor(5.5, shape=(), dtype=float32)
// OUT-NEXT: tf.Tensor([1. 0.], shape=(2,), dtype=float32)
// OUT-NEXT: tf.Tensor([3. 0.], shape=(2,), dtype=float32)
// OUT-NEXT: tf.Tensor(0.0, shape=(), dtype=float32)
// OUT-NEXT: tf.Tensor([0. 1.], shape=(2,), dtype=float32)
// OUT-EMPTY:
// OUT-NEXT: my_relu(arg0: TensorSpec(shape=(), dtype=float32)) -> TensorSpec(shape=(), dtype=float32)
// OUT-NEXT: my_relu(arg0: TensorSpec(shape=(2,), dtype=float32)) -> TensorSpec(shape=(2,), dtype=float32)
// OUT-NEXT: my_relu_list(arg0: std::vector<float> = [1, -1]) -> TensorSpec(shape=(2,), dtype=float32)
