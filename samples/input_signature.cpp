// input_signature (the guides' next_collatz and stable_resize): one trace for many shapes,
// clear errors for the wrong dtype or rank, and reduce_retracing.
#include <ag/ag.h>

#include <cstdio>

using ag::Tensor;

Tensor next_collatz(Tensor x) {
  std::printf("Tracing with %s\n", x.str().c_str());
  return ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1);
}

// The guide's stable_resize: unknown batch, height and width, a scalar int32 height.
Tensor stable_resize(Tensor x, Tensor new_height) {
  std::printf("Tracing stable_resize with spec: %s, %s\n", x.shape().tf_str().c_str(), new_height.shape().tf_str().c_str());
  ag::print("Executing stable graph for shape:", ag::shape_of(x), "and height:", new_height);
  // A stand-in for the sum of tf.image.resize(x, [new_height, width]): the sum scaled by the
  // ratio of heights, read from the run-time shape.
  Tensor height = ag::cast(ag::shape_of(x)[1], ag::float32);
  return ag::reduce_sum(x) * ag::cast(new_height, ag::float32) / height;
}

int main() {
  auto f = ag::function(next_collatz, {.input_signature = {ag::TensorSpec({-1}, ag::int32, "x")}, .name = "next_collatz"});
  fmt::print("{}\n", f(ag::constant({1, 2})));
  fmt::print("{}\n", f(ag::constant({3, 4, 5, 6, 7})));  // no retrace: [None] serves every length
  try {
    f(ag::constant({{1, 2}, {3, 4}}));
  } catch (const ag::ValueError& e) {
    fmt::print("ValueError: {}\n", e.what());
  }
  try {
    f(ag::constant({1.0, 2.0}));
  } catch (const ag::TypeError& e) {
    fmt::print("TypeError: {}\n", e.what());
  }
  fmt::print("tracing_count: {}\n\n", f.tracing_count());

  auto resize = ag::function(stable_resize, {.input_signature = {ag::TensorSpec({-1, -1, -1, 3}, ag::float32),
                                                                 ag::TensorSpec({}, ag::int32)},
                                             .name = "stable_resize"});
  fmt::print("First call:\n");
  resize(ag::ones({1, 100, 120, 3}), Tensor(50));
  fmt::print("Second call:\n");
  resize(ag::ones({2, 80, 90, 3}), Tensor(40));
  try {
    resize(ag::ones({1, 100, 120, 3}), Tensor(50.f));
  } catch (const ag::TypeError& e) {
    fmt::print("Error on third call: TypeError: {}\n", e.what());
  }
  fmt::print("tracing_count: {}\n\n", resize.tracing_count());

  auto g = ag::function([](Tensor x) { return x + 1; }, {.reduce_retracing = true, .name = "add_one"});
  for (int n = 1; n <= 20; ++n) g(ag::zeros({n}));
  fmt::print("reduce_retracing: 20 shapes, {} traces\n{}", g.tracing_count(), g.pretty_printed_concrete_signatures());
  return 0;
}
// OUT: Tracing with Tensor("x:0", shape=(None,), dtype=int32)
// OUT-NEXT: tf.Tensor([4 1], shape=(2,), dtype=int32)
// OUT-NEXT: tf.Tensor([10 2 16 3 22], shape=(5,), dtype=int32)
// OUT-NEXT: ValueError: argument 0 'x' of Function 'next_collatz' has shape (2, 2) which does not match the input_signature TensorSpec(shape=(None,), dtype=int32, name='x')
// OUT-NEXT: TypeError: argument 0 'x' of Function 'next_collatz' has dtype float64 but the input_signature expects TensorSpec(shape=(None,), dtype=int32, name='x')
// OUT-NEXT: tracing_count: 1
// OUT: First call:
// OUT-NEXT: Tracing stable_resize with spec: (None, None, None, 3), ()
// OUT-NEXT: Executing stable graph for shape: [1 100 120 3] and height: 50
// OUT-NEXT: Second call:
// OUT-NEXT: Executing stable graph for shape: [2 80 90 3] and height: 40
// OUT-NEXT: Error on third call: TypeError: argument 1 {{.*}} has dtype float32
// OUT-NEXT: tracing_count: 1
// OUT: reduce_retracing: 20 shapes, 2 traces
// OUT-NEXT: add_one(arg0: TensorSpec(shape=(1,), dtype=float32)) -> TensorSpec(shape=(1,), dtype=float32)
// OUT-NEXT: add_one(arg0: TensorSpec(shape=(None,), dtype=float32)) -> TensorSpec(shape=(None,), dtype=float32)
