// A 2-D heat equation on a torus (periodic boundaries), explicit steps in one AG_FUNCTION: each
// step adds the four neighbours as ag::roll along both axes, as a NumPy user writes it with
// np.roll. Against the same stencil as a plain C++ loop over two buffers (wrapping rows with `%`,
// the first and last column apart), in the same run, one thread (agc on 1 and 2); and the first
// call (trace + compile).   build/bench/apps/bench_periodic_heat [steps] [n]
#include <ag/ag.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr float kAlpha = 0.1f;

AG_FUNCTION Tensor diffuse(Tensor u, Tensor steps) {
  Tensor i = 0;
  while (i < steps) {
    u = u + kAlpha * (ag::roll(u, 1, 0) + ag::roll(u, -1, 0) + ag::roll(u, 1, 1) + ag::roll(u, -1, 1) - 4.0f * u);
    i += 1;
  }
  return u;
}

std::vector<float> diffuse_by_hand(std::vector<float> u, int64_t n, int steps) {
  std::vector<float> next(u.size());
  for (int s = 0; s < steps; ++s) {
    for (int64_t r = 0; r < n; ++r) {
      const float* c = &u[static_cast<size_t>(r * n)];
      const float* up = &u[static_cast<size_t>(((r + n - 1) % n) * n)];
      const float* down = &u[static_cast<size_t>(((r + 1) % n) * n)];
      float* o = &next[static_cast<size_t>(r * n)];
      o[0] = c[0] + kAlpha * (up[0] + down[0] + c[n - 1] + c[1] - 4.0f * c[0]);
      for (int64_t k = 1; k < n - 1; ++k) o[k] = c[k] + kAlpha * (up[k] + down[k] + c[k - 1] + c[k + 1] - 4.0f * c[k]);
      o[n - 1] = c[n - 1] + kAlpha * (up[n - 1] + down[n - 1] + c[n - 2] + c[0] - 4.0f * c[n - 1]);
    }
    std::swap(u, next);
  }
  return u;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 256;
  std::vector<float> u0(static_cast<size_t>(n * n));
  for (int64_t k = 0; k < n * n; ++k) u0[static_cast<size_t>(k)] = static_cast<float>((k * 7919) % 1000) / 1000.0f;
  const Tensor tu = ag::constant(u0, {n, n});
  const Tensor ts = ag::constant(int32_t{steps});

  auto f = ag::function(diffuse);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tu, ts);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const std::vector<float> theirs = diffuse_by_hand(u0, n, steps);
  const std::vector<float> got = ours.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - theirs[k]));
  if (max_diff > 1e-4f) std::printf("warning: the grids differ by %g\n", static_cast<double>(max_diff));

  auto run_agc = [&] { agbench::keep(f(tu, ts)); };
  const std::vector<double> t = agbench::time_interleaved(
      ag::set_num_threads, {{[&] { agbench::keep(diffuse_by_hand(u0, n, steps)); }}, {run_agc, 1}, {run_agc, 2}});
  const double by_hand = t[0];
  std::vector<agbench::Row> rows;
  for (int threads : {1, 2}) {
    const double agc = t[static_cast<size_t>(threads)];
    rows.push_back({fmt::format("diffuse (one call), {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc),
                    agbench::ms(by_hand) + " plain loop", fmt::format("{:.2f}x", agc / by_hand),
                    threads == 1 ? fmt::format("{:.1f} us per step; grid within {:.1e} of the loop's", agc / steps * 1e6, max_diff)
                                 : "the loop on 1 thread"});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("Heat equation on a {}x{} torus (ag::roll along both axes), {} steps, float32", n, n, steps), rows);
  return 0;
}
