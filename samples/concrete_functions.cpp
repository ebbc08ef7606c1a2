// Obtaining concrete functions (the guide's section of that name): get_concrete_function traces
// without running, from an example argument or a TensorSpec; a ConcreteFunction prints its
// signature, shows its graph, and refuses arguments of another type. A plain C++ argument stays
// in the signature with the value it was traced with (the guide's `pow` and `square`).
#include <ag/ag.h>

using ag::Tensor;

Tensor double_it(Tensor a) { return a + a; }

Tensor power(Tensor a, int b) { return ag::pow(a, static_cast<float>(b)); }

int main() {
  auto f = ag::function(double_it, {.name = "double"});
  fmt::print("Obtaining concrete trace\n");
  auto double_ints = f.get_concrete_function(ag::constant(1));
  fmt::print("Executing traced function\n");
  fmt::print("{}\n", double_ints(ag::constant(1)));
  fmt::print("{}\n", double_ints(ag::constant(2)));

  // From a spec instead of an example: the same signature, so the same concrete function.
  auto from_spec = f.get_concrete_function(ag::TensorSpec({}, ag::int32));
  fmt::print("{}\n", from_spec(ag::constant(3)));
  fmt::print("traces so far: {}\n", f.tracing_count());

  fmt::print("\nA concrete function's signature:\n  {}\n", double_ints.signature());
  fmt::print("\nIts graph:\n{}", double_ints.graph_text());

  try {
    double_ints(ag::constant(1.5));
  } catch (const ag::TypeError& e) {
    fmt::print("\nCalling it with a float64 tensor: TypeError: {}\n", e.what());
  }

  auto pow_fn = ag::function(power, {.name = "pow"});
  // (TensorFlow's example uses a spec of unknown rank; an agc concrete function always has a
  // rank, since its code is compiled for one: a Function traces once per rank.)
  auto square = pow_fn.get_concrete_function(ag::TensorSpec({}, ag::float32), 2);
  fmt::print("\nsquare = pow.get_concrete_function(TensorSpec(shape=(), float32), 2):\n  {}\n", square.signature());
  fmt::print("square(10.0, 2) = {}\n", square(Tensor(10.f), 2).item<float>());
  try {
    square(Tensor(10.f), 3);
  } catch (const ag::TypeError& e) {
    fmt::print("square(10.0, 3): TypeError: {}\n", e.what());
  }
  return 0;
}
// OUT: Obtaining concrete trace
// OUT-NEXT: Executing traced function
// OUT-NEXT: tf.Tensor(2, shape=(), dtype=int32)
// OUT-NEXT: tf.Tensor(4, shape=(), dtype=int32)
// OUT-NEXT: tf.Tensor(6, shape=(), dtype=int32)
// OUT-NEXT: traces so far: 1
// OUT: A concrete function's signature:
// OUT-NEXT: double(arg0: TensorSpec(shape=(), dtype=int32)) -> TensorSpec(shape=(), dtype=int32)
// OUT: Its graph:
// OUT-NEXT: graph double(
// OUT-NEXT: Add
// OUT-NEXT: return
// OUT: Calling it with a float64 tensor: TypeError: {{.*}}float64
// OUT: square = pow.get_concrete_function(
// OUT-NEXT: pow(arg0: TensorSpec(shape=(), dtype=float32), arg1: int = 2) -> TensorSpec(shape=(), dtype=float32)
// OUT-NEXT: square(10.0, 2) = 100
// OUT-NEXT: square(10.0, 3): TypeError: {{.*}}3
