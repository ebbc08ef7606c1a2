// A 2-D heat equation by explicit Jacobi steps, written as a NumPy or JAX user writes it: read
// shifted slices of the grid, write the interior back with x.at(...).set (JAX's functional
// update; the boundary stays fixed), in a tensor while loop that ag-rewrite stages. Compiled, the
// update writes the loop's own grid in place: no copy of the array per step (the plan shows the
// update as a view of the loop variable: docs/jit.md, "Updates in place").
#include <ag/ag.h>

#include <chrono>
#include <vector>

using ag::Slice;
using ag::Tensor;

constexpr float kAlpha = 0.2f;

AG_FUNCTION Tensor heat(Tensor u, Tensor steps) {
  Tensor i = 0;
  while (i < steps) {
    Tensor center = u(Slice{1, -1}, Slice{1, -1});
    Tensor laplacian = u(Slice{ag::none, -2}, Slice{1, -1}) + u(Slice{2}, Slice{1, -1}) +
                       u(Slice{1, -1}, Slice{ag::none, -2}) + u(Slice{1, -1}, Slice{2}) - center * 4.0f;
    u = u.at(Slice{1, -1}, Slice{1, -1}).set(center + laplacian * kAlpha);
    i += 1;
  }
  return u;
}

// The same stencil as a plain C++ loop over two buffers.
std::vector<float> heat_by_hand(std::vector<float> u, int64_t n, int steps) {
  std::vector<float> next = u;
  for (int s = 0; s < steps; ++s) {
    for (int64_t r = 1; r < n - 1; ++r)
      for (int64_t c = 1; c < n - 1; ++c) {
        const float* p = &u[static_cast<size_t>(r * n + c)];
        next[static_cast<size_t>(r * n + c)] = p[0] + (p[-n] + p[n] + p[-1] + p[1] - p[0] * 4.0f) * kAlpha;
      }
    std::swap(u, next);
  }
  return u;
}

int main() {
  const int64_t n = 128;
  const int steps = 200;
  std::vector<float> u0(static_cast<size_t>(n * n), 0.0f);
  for (int64_t c = 0; c < n; ++c) u0[static_cast<size_t>(c)] = 1.0f;  // a hot top edge
  u0[static_cast<size_t>((n / 2) * n + n / 2)] = 50.0f;                // and a hot spot
  const Tensor grid = ag::constant(u0, {n, n});

  auto f = ag::function(heat);
  const Tensor result = f(grid, ag::constant(steps));
  const std::vector<float> by_hand = heat_by_hand(u0, n, steps);
  const std::vector<float> got = result.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - by_hand[k]));
  fmt::print("{}x{} grid, {} steps: total heat {:.3f}, the same as a plain C++ loop's within 1e-4: {}\n", n, n, steps,
             ag::reduce_sum(result).item<float>(), max_diff < 1e-4f);
  fmt::print("boundary unchanged: {}; traced {} time(s)\n",
             ag::reduce_all(ag::equal(result[0], grid[0])).item<bool>(), f.tracing_count());

  auto time_of = [](auto&& run) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < 5; ++k) run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 5;
  };
  const double compiled = time_of([&] { f(grid, ag::constant(steps)); });
  const double plain = time_of([&] { heat_by_hand(u0, n, steps); });
  fmt::print("compiled {:.2f} ms, plain loop {:.2f} ms ({:.1f}x)\n", compiled, plain, compiled / plain);
  return 0;
}
// OUT: 128x128 grid, 200 steps: total heat {{[0-9.]+}}, the same as a plain C++ loop's within 1e-4: true
// OUT: boundary unchanged: true; traced 1 time(s)
// OUT: compiled
