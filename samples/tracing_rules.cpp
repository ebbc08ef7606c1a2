// The rules of tracing (the guides' `double`, `dynamic_resize` and `train`): a trace per new
// input signature; plain C++ side effects run only while tracing; ag::print runs on every call.
// A plain C++ argument is part of the signature by value; a tensor by dtype and shape only.
#include <ag/ag.h>

#include <chrono>
#include <cstdio>

using ag::Tensor;

Tensor double_it(Tensor a) {
  std::printf("Tracing with %s\n", a.str().c_str());  // plain C++: only while tracing
  return a + a;
}

Tensor dynamic_resize(Tensor x, int new_height) {
  std::printf("Tracing dynamic_resize with x shape: %s, new_height: %d\n", x.shape().tf_str().c_str(), new_height);
  ag::print("Executing graph for shape:", ag::shape_of(x), "and height:", new_height);
  // A stand-in for tf.image.resize: keep the first new_height rows.
  Tensor resized = ag::slice(x, {0, 0, 0, 0}, {-1, new_height, -1, -1});
  return ag::reduce_sum(resized);
}

void train_one_step() {}

// The guide's `train(num_steps)`, once with a plain int and once with a tensor: the loop over
// ag::range is staged when num_steps is a tensor, and unrolled while tracing when it is an int.
template <class Steps>
AG_FUNCTION void train(Steps num_steps) {
  fmt::print("Tracing with num_steps = {}\n", num_steps);
  ag::print("Executing with num_steps =", num_steps);
  for (auto step : ag::range(num_steps)) {
    (void)step;
    train_one_step();
  }
}

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main() {
  auto f = ag::function(double_it, {.name = "double"});
  fmt::print("{}\n\n", f(ag::constant(1)));
  fmt::print("{}\n\n", f(ag::constant(1.1)));
  fmt::print("{}\n\n", f(ag::constant({1, 2})));
  fmt::print("# This doesn't print 'Tracing with ...': same signature as the first call\n");
  fmt::print("{}\n\n", f(ag::constant(2)));
  fmt::print("Concrete functions of 'double':\n{}\n", f.pretty_printed_concrete_signatures());

  auto resize = ag::function(dynamic_resize, {.name = "dynamic_resize"});
  Tensor img1 = ag::random_normal({1, 100, 100, 3}, ag::float32, 0, 1, 1);
  fmt::print("First call time: {:.4f}s\n", seconds([&] { resize(img1, 50); }));
  Tensor img2 = ag::random_normal({1, 100, 100, 3}, ag::float32, 0, 1, 2);
  fmt::print("Second call time (cached): {:.4f}s\n", seconds([&] { resize(img2, 50); }));
  Tensor img3 = ag::random_normal({1, 120, 120, 3}, ag::float32, 0, 1, 3);
  fmt::print("Third call time (re-trace, new shape): {:.4f}s\n", seconds([&] { resize(img3, 50); }));
  Tensor img4 = ag::random_normal({1, 100, 100, 3}, ag::float64, 0, 1, 4);
  fmt::print("Fourth call time (re-trace, new dtype): {:.4f}s\n", seconds([&] { resize(img4, 50); }));
  fmt::print("Fifth call time (re-trace, new height): {:.4f}s\n", seconds([&] { resize(img1, 60); }));
  fmt::print("tracing_count: {}\n", resize.tracing_count());

  fmt::print("\nRetracing occurs for different C++ values.\n");
  auto train_int = ag::function(train<int>, {.name = "train"});
  train_int(10);
  train_int(20);
  fmt::print("\nTraces are reused for tensor arguments.\n");
  auto train_tensor = ag::function(train<Tensor>, {.name = "train"});
  train_tensor(Tensor(10));
  train_tensor(Tensor(20));

  fmt::print("\nSeparate Functions never share traces:\n");
  auto g = [] {
    std::printf("Tracing!\n");
    ag::print("Executing");
  };
  ag::function(g)();
  ag::function(g)();
  return 0;
}
// OUT: Tracing with Tensor("{{.*}}", shape=(), dtype=int32)
// OUT-NEXT: tf.Tensor(2, shape=(), dtype=int32)
// OUT: Tracing with Tensor("{{.*}}", shape=(), dtype=float64)
// OUT-NEXT: tf.Tensor(2.2, shape=(), dtype=float64)
// OUT: Tracing with Tensor("{{.*}}", shape=(2,), dtype=int32)
// OUT-NEXT: tf.Tensor([2 4], shape=(2,), dtype=int32)
// OUT: # This doesn't print 'Tracing with ...'
// OUT-NEXT: tf.Tensor(4, shape=(), dtype=int32)
// OUT: Concrete functions of 'double':
// OUT-NEXT: double(arg0: TensorSpec(shape=(), dtype=int32)) -> TensorSpec(shape=(), dtype=int32)
// OUT-NEXT: double(arg0: TensorSpec(shape=(), dtype=float64)) -> TensorSpec(shape=(), dtype=float64)
// OUT-NEXT: double(arg0: TensorSpec(shape=(2,), dtype=int32)) -> TensorSpec(shape=(2,), dtype=int32)
// OUT: Tracing dynamic_resize with x shape: (1, 100, 100, 3), new_height: 50
// OUT-NEXT: Executing graph for shape: [1 100 100 3] and height: 50
// OUT-NEXT: First call time:
// OUT-NEXT: Executing graph for shape: [1 100 100 3] and height: 50
// OUT-NEXT: Second call time (cached):
// OUT-NEXT: Tracing dynamic_resize with x shape: (1, 120, 120, 3), new_height: 50
// OUT: Tracing dynamic_resize with x shape: (1, 100, 100, 3), new_height: 50
// OUT: Tracing dynamic_resize with x shape: (1, 100, 100, 3), new_height: 60
// OUT: tracing_count: 4
// OUT: Retracing occurs for different C++ values.
// OUT-NEXT: Tracing with num_steps = 10
// OUT-NEXT: Executing with num_steps = 10
// OUT-NEXT: Tracing with num_steps = 20
// OUT-NEXT: Executing with num_steps = 20
// OUT: Traces are reused for tensor arguments.
// OUT-NEXT: Tracing with num_steps = Tensor(
// OUT-NEXT: Executing with num_steps = 10
// OUT-NEXT: Executing with num_steps = 20
// OUT: Separate Functions never share traces:
// OUT-NEXT: Tracing!
// OUT-NEXT: Executing
// OUT-NEXT: Tracing!
// OUT-NEXT: Executing
