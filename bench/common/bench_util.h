// A tiny benchmark harness: repeat a callable until enough time has passed, report the best
// of several rounds (robust against a noisy shared machine), print aligned tables.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace agbench {

// Keeps a value alive so the optimizer cannot delete the computation.
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

// One round of f: calls in a row until at least `min_seconds` have passed, `iters` of them
// (grown and kept for the next round); the seconds per call.
template <class F>
double time_round(F&& f, int64_t& iters, double min_seconds) {
  using clock = std::chrono::steady_clock;
  for (;;) {
    const auto t0 = clock::now();
    for (int64_t i = 0; i < iters; ++i) f();
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (s >= min_seconds) return s / static_cast<double>(iters);
    iters = s <= 0 ? iters * 10 : std::max(iters + 1, static_cast<int64_t>(iters * min_seconds / s * 1.2));
  }
}

// Seconds per call of f: the best of `rounds` rounds of at least `min_seconds` each.
template <class F>
double time_per_call(F&& f, double min_seconds = 0.1, int rounds = 5) {
  double best = 1e300;
  int64_t iters = 1;
  for (int r = 0; r < rounds; ++r) best = std::min(best, time_round(f, iters, min_seconds));
  return best;
}

// One callable of time_interleaved; `threads` > 0: agc's pool at that many threads for its rounds.
struct Timed {
  std::function<void()> call;
  int threads = 0;
};

// Seconds per call of each callable: one round of each in turn (at least `min_seconds`), then
// again, `rounds` times; the best round of each. On a machine whose speed drifts over seconds (a
// shared VM's slow phases), callables timed one after the other (time_per_call) met different
// phases and their ratio moved by 1.3x between runs; taken in turn, a slow phase slows each of
// them alike. `set_threads` (ag::set_num_threads) is called with 1 after a callable's round.
inline std::vector<double> time_interleaved(const std::function<void(int)>& set_threads, const std::vector<Timed>& timed,
                                            double min_seconds = 0.1, int rounds = 5) {
  std::vector<double> best(timed.size(), 1e300);
  std::vector<int64_t> iters(timed.size(), 1);
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < timed.size(); ++k) {
      if (timed[k].threads > 0) set_threads(timed[k].threads);
      best[k] = std::min(best[k], time_round(timed[k].call, iters[k], min_seconds));
      if (timed[k].threads > 0) set_threads(1);
    }
  }
  return best;
}

struct Row {
  std::string name, value, baseline, ratio, note;
};

inline void print_table(const std::string& title, const std::vector<Row>& rows) {
  // The first column is as wide as the longest name, so every row lines up.
  std::size_t name_width = std::string_view("benchmark").size();
  for (const Row& r : rows) name_width = std::max(name_width, r.name.size());
  fmt::print("\n{}\n", title);
  fmt::print("| {:<{}} | {:>14} | {:>22} | {:>9} | {}\n", "benchmark", name_width, "agc", "baseline (same run)", "ratio", "note");
  fmt::print("|{:-<{}}|{:-<16}|{:-<24}|{:-<11}|{:-<20}\n", "", name_width + 2, "", "", "", "");
  for (const Row& r : rows)
    fmt::print("| {:<{}} | {:>14} | {:>22} | {:>9} | {}\n", r.name, name_width, r.value, r.baseline, r.ratio, r.note);
}

inline std::string ns(double seconds) { return fmt::format("{:.1f} ns", seconds * 1e9); }
inline std::string us(double seconds) { return fmt::format("{:.1f} us", seconds * 1e6); }
inline std::string ms(double seconds) { return fmt::format("{:.2f} ms", seconds * 1e3); }

}  // namespace agbench
