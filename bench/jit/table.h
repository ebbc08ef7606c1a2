// The table jit_bench prints: one markdown row per measurement, and the timing loop behind it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

namespace bench::table {

using Clock = std::chrono::steady_clock;

template <class T>
void keep(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

// Minimum over `reps` of the mean time per call of `iters` calls, in nanoseconds.
inline double time_ns(const std::function<void()>& f, int iters, int reps) {
  f();  // warm up (first calls, caches, allocator blocks)
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters;
    best = std::min(best, ns);
  }
  return best;
}

// time_ns of `f` and of its baseline `g`, their repetitions alternated: on a machine whose speed
// drifts (a shared VM, turbo), both minima come from the same stretch of the run, so their ratio
// is not the drift's. Returns {f's, g's}.
inline std::pair<double, double> time_pair_ns(const std::function<void()>& f, int f_iters, const std::function<void()>& g,
                                              int g_iters, int reps) {
  f();
  g();
  double best_f = 1e300, best_g = 1e300;
  auto one = [](const std::function<void()>& h, int iters) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) h();
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters;
  };
  for (int r = 0; r < reps; ++r) {
    best_f = std::min(best_f, one(f, f_iters));
    best_g = std::min(best_g, one(g, g_iters));
  }
  return {best_f, best_g};
}

inline std::string fmt_time(double ns) {
  char buf[64];
  if (ns < 1e3) std::snprintf(buf, sizeof buf, "%.1f ns", ns);
  else if (ns < 1e6) std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  return buf;
}

inline void header() {
  std::printf("| workload | variant | time per call | ratio | target |\n|---|---|---|---|---|\n");
}

inline void row(const char* workload, const char* variant, double ns, const std::string& ratio = "", const std::string& target = "") {
  std::printf("| %s | %s | %s | %s | %s |\n", workload, variant, fmt_time(ns).c_str(), ratio.c_str(), target.c_str());
  std::fflush(stdout);
}

inline std::string ratio_str(double r, const char* what) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2fx %s", r, what);
  return buf;
}

inline std::string verdict(bool met) { return met ? "met" : "NOT met"; }

}  // namespace bench::table
