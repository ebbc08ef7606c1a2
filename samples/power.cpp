// Seeing the speed-up (the guide's `power`): 100 chained 10x10 matmuls, eager vs compiled.
#include <ag/ag.h>

#include <chrono>

using ag::Tensor;

Tensor power(Tensor x, int y) {
  Tensor result = ag::eye(10, ag::int32);
  for (int i = 0; i < y; ++i) result = ag::matmul(x, result);  // a plain C++ loop: unrolled while tracing
  return result;
}

template <class F>
double seconds(int repeats, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main() {
  Tensor x = ag::random_uniform({10, 10}, ag::int32, 0, 2, 7);
  auto compiled = ag::function(power, {.name = "power"});
  const Tensor eager_result = power(x, 100);
  const Tensor graph_result = compiled(x, 100);  // traces and compiles (first call)
  fmt::print("Results agree: {}\n", eager_result.to_vector<int>() == graph_result.to_vector<int>());
  const double eager = seconds(1000, [&] { power(x, 100); });
  const double graph = seconds(1000, [&] { compiled(x, 100); });
  fmt::print("Eager execution: {:.3f} s\n", eager);
  fmt::print("Graph execution: {:.3f} s\n", graph);
  fmt::print("Speed-up: {:.1f}x (1000 calls of 100 matmuls of 10x10 int32)\n", eager / graph);
  return 0;
}
// OUT: Results agree: true
// OUT-NEXT: Eager execution: {{[0-9.]+}} s
// OUT-NEXT: Graph execution: {{[0-9.]+}} s
