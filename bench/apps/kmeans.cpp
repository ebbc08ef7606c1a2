// k-means (Lloyd's algorithm) on 100,000 points in the plane, 8 centroids, 20 iterations in one
// AG_FUNCTION, as a NumPy user writes it: the squared distances of every point to every centroid
// by broadcasting ([N, 1, 2] - [1, K, 2]), argmin, then each centroid the mean of its points by a
// segment sum. Against the same by hand (one pass over the points per iteration), in the same
// run, one thread; the same body eagerly (what run_functions_eagerly runs); and the first call.
//   build/bench/apps/bench_kmeans [iterations]
#include <ag/ag.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kPoints = 100000, kClusters = 8;

AG_FUNCTION Tensor kmeans(Tensor x, Tensor centroids, Tensor iterations) {
  Tensor i = 0;
  while (i < iterations) {
    Tensor d = ag::reduce_sum(ag::square(ag::expand_dims(x, 1) - ag::expand_dims(centroids, 0)), 2);  // [N, K]
    Tensor nearest = ag::cast(ag::argmin(d, 1), ag::int32);
    Tensor sums = ag::unsorted_segment_sum(x, nearest, kClusters);
    Tensor counts = ag::unsorted_segment_sum(ag::ones_like(nearest), nearest, kClusters);
    centroids = sums / ag::expand_dims(ag::maximum(ag::cast(counts, ag::float32), 1.0f), 1);
    i += 1;
  }
  return centroids;
}

std::vector<float> kmeans_by_hand(const std::vector<float>& x, std::vector<float> c, int iterations) {
  std::vector<float> sums(static_cast<size_t>(kClusters * 2));
  std::vector<int> counts(static_cast<size_t>(kClusters));
  for (int it = 0; it < iterations; ++it) {
    std::fill(sums.begin(), sums.end(), 0.0f);
    std::fill(counts.begin(), counts.end(), 0);
    for (int64_t p = 0; p < kPoints; ++p) {
      const float px = x[static_cast<size_t>(2 * p)], py = x[static_cast<size_t>(2 * p + 1)];
      int best = 0;
      float best_d = 0;
      for (int k = 0; k < kClusters; ++k) {
        const float dx = px - c[static_cast<size_t>(2 * k)], dy = py - c[static_cast<size_t>(2 * k + 1)];
        const float d = dx * dx + dy * dy;
        if (k == 0 || d < best_d) best = k, best_d = d;
      }
      sums[static_cast<size_t>(2 * best)] += px;
      sums[static_cast<size_t>(2 * best + 1)] += py;
      ++counts[static_cast<size_t>(best)];
    }
    for (int k = 0; k < kClusters; ++k)
      for (int j = 0; j < 2; ++j)
        c[static_cast<size_t>(2 * k + j)] = sums[static_cast<size_t>(2 * k + j)] / static_cast<float>(std::max(counts[static_cast<size_t>(k)], 1));
  }
  return c;
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  // Eight blobs; the first eight points start as the centroids.
  std::vector<float> x(static_cast<size_t>(2 * kPoints));
  uint32_t s = 5;
  auto uniform = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  };
  for (int64_t p = 0; p < kPoints; ++p) {
    const int blob = static_cast<int>(p % kClusters);
    x[static_cast<size_t>(2 * p)] = static_cast<float>(blob % 4) * 3.0f + uniform() * 2.0f;
    x[static_cast<size_t>(2 * p + 1)] = static_cast<float>(blob / 4) * 3.0f + uniform() * 2.0f;
  }
  const std::vector<float> c0(x.begin(), x.begin() + 2 * kClusters);
  const Tensor tx = ag::constant(x, {kPoints, 2}), tc = ag::constant(c0, {kClusters, 2});
  const Tensor n = ag::constant(int32_t{iterations});

  auto f = ag::function(kmeans);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tx, tc, n);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const std::vector<float> theirs = kmeans_by_hand(x, c0, iterations), got = ours.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - theirs[k]));
  if (max_diff > 1e-3f) std::printf("warning: the centroids differ from the loop's by %g\n", static_cast<double>(max_diff));

  auto run_agc = [&] { agbench::keep(f(tx, tc, n)); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_agc, 1}, {[&] { agbench::keep(kmeans_by_hand(x, c0, iterations)); }}, {run_agc, 2}});
  const double agc = t[0], plain = t[1], agc2 = t[2];
  const double eager = agbench::time_per_call([&] { agbench::keep(kmeans(tx, tc, n)); }, 0.05, 2);
  agbench::print_table(fmt::format("k-means: {} points, {} centroids, {} iterations", kPoints, kClusters, iterations),
                       {{"solve, 1 thread", agbench::ms(agc), agbench::ms(plain) + " plain loop", fmt::format("{:.2f}x", agc / plain),
                         fmt::format("centroids within {:.1e} of the loop's", max_diff)},
                        {"solve, 2 threads", agbench::ms(agc2), agbench::ms(plain) + " plain loop", fmt::format("{:.2f}x", agc2 / plain),
                         "the loop on 1 thread"},
                        {"the same eagerly", agbench::ms(eager), agbench::ms(agc) + " compiled", fmt::format("{:.2f}x", eager / agc), ""},
                        {"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""}});
  return 0;
}
