// The Mandelbrot set's escape counts on a 256 x 256 grid, at most 100 iterations, in one
// AG_FUNCTION as a NumPy user writes it: the whole grid per iteration, a mask of the points still
// inside, `while (reduce_any(active))`. Against a per-point loop with an early exit (what a C++
// programmer writes), in the same run, one thread; and the first call. The staged loop runs every
// point until the last escapes: the gap is the masked work, not the arithmetic.
//   build/bench/apps/bench_mandelbrot
#include <ag/ag.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kSize = 256;
constexpr int kMaxIterations = 100;

AG_FUNCTION Tensor escape_counts(Tensor cr, Tensor ci) {
  Tensor zr = ag::zeros_like(cr), zi = ag::zeros_like(ci);
  Tensor counts = ag::zeros_like(cr);
  Tensor active = ag::ones_like(cr) > 0.0f;
  Tensor i = 0;
  while (ag::reduce_any(active) & (i < kMaxIterations)) {
    Tensor next_r = zr * zr - zi * zi + cr;
    Tensor next_i = 2.0f * zr * zi + ci;
    zr = ag::where(active, next_r, zr);
    zi = ag::where(active, next_i, zi);
    counts = counts + ag::cast(active, ag::float32);
    active = active & (zr * zr + zi * zi < 4.0f);
    i += 1;
  }
  return counts;
}

std::vector<float> escape_counts_by_hand(const std::vector<float>& cr, const std::vector<float>& ci) {
  std::vector<float> counts(cr.size());
  for (size_t p = 0; p < cr.size(); ++p) {
    float zr = 0, zi = 0;
    int n = 0;
    while (n < kMaxIterations) {
      const float next_r = zr * zr - zi * zi + cr[p], next_i = 2.0f * zr * zi + ci[p];
      zr = next_r, zi = next_i;
      ++n;
      if (zr * zr + zi * zi >= 4.0f) break;
    }
    counts[p] = static_cast<float>(n);
  }
  return counts;
}

int main() {
  std::vector<float> cr(static_cast<size_t>(kSize * kSize)), ci(cr.size());
  for (int64_t r = 0; r < kSize; ++r)
    for (int64_t c = 0; c < kSize; ++c) {
      cr[static_cast<size_t>(r * kSize + c)] = -2.0f + 2.5f * static_cast<float>(c) / kSize;
      ci[static_cast<size_t>(r * kSize + c)] = -1.25f + 2.5f * static_cast<float>(r) / kSize;
    }
  const Tensor tr = ag::constant(cr, {kSize, kSize}), ti = ag::constant(ci, {kSize, kSize});
  auto f = ag::function(escape_counts);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tr, ti);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const std::vector<float> theirs = escape_counts_by_hand(cr, ci), got = ours.to_vector<float>();
  size_t differ = 0;
  for (size_t k = 0; k < got.size(); ++k) differ += got[k] != theirs[k];
  auto run_agc = [&] { agbench::keep(f(tr, ti)); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_agc, 1}, {[&] { agbench::keep(escape_counts_by_hand(cr, ci)); }}, {run_agc, 2}});
  const double agc = t[0], plain = t[1], agc2 = t[2];
  agbench::print_table(fmt::format("Mandelbrot: {}x{} grid, at most {} iterations", kSize, kSize, kMaxIterations),
                       {{"escape counts, 1 thread", agbench::ms(agc), agbench::ms(plain) + " per-point loop",
                         fmt::format("{:.2f}x", agc / plain), fmt::format("{} of {} counts differ", differ, got.size())},
                        {"escape counts, 2 threads", agbench::ms(agc2), agbench::ms(plain) + " per-point loop",
                         fmt::format("{:.2f}x", agc2 / plain), "the loop on 1 thread"},
                        {"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""}});
  return 0;
}
