// A 2-D heat equation by explicit Jacobi steps, 500 steps in one AG_FUNCTION: each step replaces
// the interior of the grid with x.at(...).set (the boundary stays fixed), as a NumPy or JAX user
// writes it. Against the same stencil as a plain C++ loop over two buffers, in the same run, one
// thread (agc on 1 and 2); and the first call (trace + compile).
//   build/bench/apps/bench_heat_stencil [steps] [n]
#include <ag/ag.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Slice;
using ag::Tensor;

constexpr float kAlpha = 0.2f;

AG_FUNCTION Tensor heat(Tensor u, Tensor steps) {
  Tensor i = 0;
  while (i < steps) {
    Tensor center = u(Slice{1, -1}, Slice{1, -1});
    Tensor laplacian = u(Slice{ag::none, -2}, Slice{1, -1}) + u(Slice{2}, Slice{1, -1}) + u(Slice{1, -1}, Slice{ag::none, -2}) +
                       u(Slice{1, -1}, Slice{2}) - center * 4.0f;
    u = u.at(Slice{1, -1}, Slice{1, -1}).set(center + laplacian * kAlpha);
    i += 1;
  }
  return u;
}

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

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 500;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 256;
  std::vector<float> u0(static_cast<size_t>(n * n), 0.0f);
  for (int64_t c = 0; c < n; ++c) u0[static_cast<size_t>(c)] = 1.0f;  // a hot top edge
  u0[static_cast<size_t>((n / 2) * n + n / 2)] = 50.0f;
  const Tensor tu = ag::constant(u0, {n, n});
  const Tensor ts = ag::constant(int32_t{steps});

  auto f = ag::function(heat);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tu, ts);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const std::vector<float> theirs = heat_by_hand(u0, n, steps);
  const std::vector<float> got = ours.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - theirs[k]));
  if (max_diff > 1e-4f) std::printf("warning: the grid differs from the plain loop's by %g\n", static_cast<double>(max_diff));

  auto run_agc = [&] { agbench::keep(f(tu, ts)); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_agc, 1}, {[&] { agbench::keep(heat_by_hand(u0, n, steps)); }}, {run_agc, 2}});
  const double agc = t[0], plain = t[1], agc2 = t[2];
  agbench::print_table(fmt::format("Heat stencil: {}x{} grid, {} Jacobi steps", n, n, steps),
                       {{"solve (one call), 1 thread", agbench::ms(agc), agbench::ms(plain) + " plain loop",
                         fmt::format("{:.2f}x", agc / plain),
                         fmt::format("{:.1f} us per step; grid within {:.1e} of the loop's", agc / steps * 1e6, max_diff)},
                        {"solve (one call), 2 threads", agbench::ms(agc2), agbench::ms(plain) + " plain loop",
                         fmt::format("{:.2f}x", agc2 / plain), "the loop on 1 thread"},
                        {"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""}});
  return 0;
}
