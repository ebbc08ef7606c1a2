// The measured choice between a compiled loop's split and its run on the calling thread
// (ag/detail/loop_splits.h).
#include "ag/detail/loop_splits.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>

#include "ag/detail/env_choice.h"

namespace ag::detail {
namespace {

std::atomic<LoopSplitsMode> g_mode{LoopSplitsMode::BySize};
// Loops large enough to split: a program has a few dozen at most; the pool's calls
// keep the most recently used ones' trials.
constexpr int kLoopSlots = 128;

int64_t nanoseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LoopSplitsMode loop_splits_mode() { return g_mode.load(std::memory_order_relaxed); }

void read_loop_splits_mode_from_env() {
  g_mode.store(env_choice("AG_LOOP_SPLITS", LoopSplitsMode::BySize,
                          {{"size", LoopSplitsMode::BySize}, {"measure", LoopSplitsMode::Measure}, {"0", LoopSplitsMode::Never}},
                          "size (the default), measure, or 0 (never)"),
               std::memory_order_relaxed);
}

LoopSplitsMode set_loop_splits_mode(LoopSplitsMode mode) { return g_mode.exchange(mode, std::memory_order_relaxed); }

std::string describe_loop_site(const LoopSiteKey& key) {
  return fmt::format("agc: compiled loop {} over {} rows, {} threads", key.worker, key.n, parallel_threads());
}

LoopSplitsChooser& loop_splits_chooser() {
  static LoopSplitsChooser chooser(describe_loop_site, {.slots = kLoopSlots,
                                                        .order = LoopSplitsChooser::Order::InARow,
                                                        .prefer = LoopSplitsChooser::Default::Split});
  return chooser;
}

void parallel_for_measured(int64_t n, int64_t grain, RangeFn fn, void* closure, int64_t unit) {
  const LoopSplitsMode mode = loop_splits_mode();
  if (mode == LoopSplitsMode::BySize || !parallel_for_would_split(n, grain)) return parallel_for_erased(n, grain, fn, closure, unit);
  if (mode == LoopSplitsMode::Never) return fn(closure, 0, n);
  const LoopSiteKey key{reinterpret_cast<const void*>(fn), n};
  const LoopSplitsChooser::Choice choice = loop_splits_chooser().choose(key);
  const auto start = choice.timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (choice.split) {
    parallel_for_erased(n, grain, fn, closure, unit);
  } else {
    fn(closure, 0, n);
  }
  if (choice.timed) loop_splits_chooser().record(key, choice.split, nanoseconds_since(start));
}

}  // namespace ag::detail
