// Polymorphism (the guide's my_relu): one Function, a concrete function per input signature.
// TensorFlow's third trace comes from a Python list argument (traced by value); C++ arguments
// are tensors or plain scalars, so here the third signature is a matrix.
#include <ag/ag.h>

ag::Tensor my_relu(ag::Tensor x) { return ag::maximum(0.f, x); }

int main() {
  auto f = ag::function(my_relu, {.name = "my_relu"});
  fmt::print("{}\n", f(ag::constant(5.5f)));
  fmt::print("{}\n", f(ag::constant({1.f, -1.f})));
  fmt::print("{}\n", f(ag::constant({3.f, -3.f})));  // same dtype and shape: reuses the second trace
  fmt::print("{}\n", f(ag::constant({{1.f, -2.f}, {-3.f, 4.f}})));
  fmt::print("\nThe three concrete functions of my_relu:\n{}", f.pretty_printed_concrete_signatures());
  return 0;
}
// OUT: tf.Tensor(5.5, shape=(), dtype=float32)
// OUT-NEXT: tf.Tensor([1. 0.], shape=(2,), dtype=float32)
// OUT-NEXT: tf.Tensor([3. 0.], shape=(2,), dtype=float32)
// OUT: The three concrete functions of my_relu:
// OUT-NEXT: my_relu(arg0: TensorSpec(shape=(), dtype=float32)) -> TensorSpec(shape=(), dtype=float32)
// OUT-NEXT: my_relu(arg0: TensorSpec(shape=(2,), dtype=float32)) -> TensorSpec(shape=(2,), dtype=float32)
// OUT-NEXT: my_relu(arg0: TensorSpec(shape=(2, 2), dtype=float32)) -> TensorSpec(shape=(2, 2), dtype=float32)
