// PageRank on an edge list (100k pages, 1M links, a tenth of the pages without out-links), as a
// graph-analytics user writes it: per iteration a gather of each link's source contribution, a
// segment sum into its target, the dangling pages' mass spread evenly, until the L1 change falls
// under a tolerance; the whole power iteration is one AG_FUNCTION with a staged `while`. Against
// the same algorithm by hand (a loop over the links), in the same run, 1 thread and 2; and the
// first call (trace + compile).   build/bench/apps/bench_pagerank [pages] [links]
#include <ag/ag.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

AG_FUNCTION Tensor pagerank(Tensor src, Tensor dst, Tensor inv_out_degree, Tensor damping, Tensor tol, Tensor max_iters) {
  const int64_t pages = inv_out_degree.shape()[0];
  const Tensor dangling = ag::cast(inv_out_degree == 0.0, ag::float64);
  Tensor rank = ag::ones_like(inv_out_degree) / static_cast<double>(pages);
  Tensor change = ag::constant(1.0);
  Tensor i = 0;
  while (i < max_iters && change > tol) {
    Tensor incoming = ag::unsorted_segment_sum(ag::gather(rank * inv_out_degree, src), dst, pages);
    Tensor lost = ag::reduce_sum(rank * dangling);
    Tensor next = (1.0 - damping) / static_cast<double>(pages) + damping * (incoming + lost / static_cast<double>(pages));
    change = ag::reduce_sum(ag::abs(next - rank));
    rank = next;
    i += 1;
  }
  return rank;
}

// The same power iteration by hand.
std::vector<double> pagerank_by_hand(const std::vector<int32_t>& src, const std::vector<int32_t>& dst, const std::vector<double>& inv_out_degree,
                                     double damping, double tol, int max_iters, int* iterations) {
  const size_t pages = inv_out_degree.size();
  std::vector<double> rank(pages, 1.0 / static_cast<double>(pages)), contrib(pages), incoming(pages);
  double change = 1.0;
  int i = 0;
  while (i < max_iters && change > tol) {
    double lost = 0;
    for (size_t p = 0; p < pages; ++p) {
      contrib[p] = rank[p] * inv_out_degree[p];
      if (inv_out_degree[p] == 0.0) lost += rank[p];
      incoming[p] = 0;
    }
    for (size_t e = 0; e < src.size(); ++e) incoming[static_cast<size_t>(dst[e])] += contrib[static_cast<size_t>(src[e])];
    change = 0;
    const double base = (1.0 - damping) / static_cast<double>(pages) + damping * lost / static_cast<double>(pages);
    for (size_t p = 0; p < pages; ++p) {
      const double next = base + damping * incoming[p];
      change += std::abs(next - rank[p]);
      rank[p] = next;
    }
    ++i;
  }
  *iterations = i;
  return rank;
}

int main(int argc, char** argv) {
  const int64_t pages = argc > 1 ? std::atoll(argv[1]) : 100000;
  const int64_t links = argc > 2 ? std::atoll(argv[2]) : 10 * pages;
  const double damping = 0.85, tol = 1e-9;
  const int max_iters = 200;
  // Links from the first 90% of the pages; targets skewed toward low page numbers (a few pages
  // collect many links, as on the web).
  std::srand(11);
  std::vector<int32_t> src(static_cast<size_t>(links)), dst(static_cast<size_t>(links));
  std::vector<double> out_degree(static_cast<size_t>(pages), 0.0);
  for (int64_t e = 0; e < links; ++e) {
    const double u = static_cast<double>(std::rand()) / RAND_MAX;
    src[static_cast<size_t>(e)] = static_cast<int32_t>(std::rand() % (pages * 9 / 10));
    dst[static_cast<size_t>(e)] = static_cast<int32_t>(std::min<int64_t>(pages - 1, static_cast<int64_t>(u * u * u * static_cast<double>(pages))));
    out_degree[static_cast<size_t>(src[static_cast<size_t>(e)])] += 1;
  }
  std::vector<double> inv(static_cast<size_t>(pages));
  for (size_t p = 0; p < inv.size(); ++p) inv[p] = out_degree[p] > 0 ? 1.0 / out_degree[p] : 0.0;
  const Tensor tsrc = ag::constant(src, {links}), tdst = ag::constant(dst, {links}), tinv = ag::constant(inv, {pages});
  const Tensor tdamping = ag::constant(damping), ttol = ag::constant(tol), titers = ag::constant(int32_t{max_iters});

  auto f = ag::function(pagerank);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tsrc, tdst, tinv, tdamping, ttol, titers);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ag::set_num_threads(1);
  int iterations = 0;
  const std::vector<double> theirs = pagerank_by_hand(src, dst, inv, damping, tol, max_iters, &iterations);
  const std::vector<double> r = ours.to_vector<double>();
  double max_diff = 0, total = 0;
  for (size_t p = 0; p < r.size(); ++p) {
    max_diff = std::max(max_diff, std::abs(r[p] - theirs[p]));
    total += r[p];
  }
  if (max_diff > 1e-9 || std::abs(total - 1.0) > 1e-6) std::printf("warning: the ranks differ by %g (they sum to %.9f)\n", max_diff, total);

  std::vector<agbench::Row> rows;
  auto run_agc = [&] { agbench::keep(f(tsrc, tdst, tinv, tdamping, ttol, titers)); };
  auto run_by_hand = [&] {
    int its = 0;
    agbench::keep(pagerank_by_hand(src, dst, inv, damping, tol, max_iters, &its));
  };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_by_hand, 1}, {run_agc, 1}, {run_agc, 2}});
  for (int threads : {1, 2}) {
    const double agc = t[threads == 1 ? 1 : 2];
    rows.push_back({fmt::format("solve, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc), agbench::ms(t[0]) + " by hand",
                    fmt::format("{:.2f}x", agc / t[0]), fmt::format("{:.1f} us per iteration", agc / iterations * 1e6)});
  }
  // The first call runs the whole solve too (18 passes over 1M links): what it adds to a cached
  // call is the trace and the compile.
  rows.push_back({"first call (trace + compile + the solve, default threads)", agbench::ms(first), "", "",
                  fmt::format("{} more than a cached solve on 2 threads", agbench::ms(first - t[2]))});
  agbench::print_table(fmt::format("PageRank: {} pages, {} links, float64, {} iterations to an L1 change < {:g}; ranks within {:.1e}", pages,
                                   links, iterations, tol, max_diff),
                       rows);
  return 0;
}
