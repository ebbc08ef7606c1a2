// Whether a compiled loop the JIT hands to the pool (agc_rt_parallel_for: jit/src/lower/
// parallel_loops.cpp) runs split over the threads or whole on the calling thread. By default a
// loop splits by its size (its grain); AG_LOOP_SPLITS=measure decides per loop and trip count
// by trial in the process that runs it (split_chooser.h; docs/jit.md, "Threads").
//
// A split changes no bit of a loop's result, only time. On a 2-vCPU VM whose cross-vCPU round
// trip moves between phases, the GCN step ran 0.93-1.04x its hand-written step on two threads
// splitting by size and 0.87-0.90x measured (same minutes, alternating); but each loop's trial
// sees only its own time, not what its split leaves in the other core's cache for the next loop:
// k-means' solve, 0.52-0.56x the plain loop split by size, took 0.60-0.71x measured. Hence an
// option, not the default.
#pragma once

#include <cstdint>

#include "ag/detail/parallel.h"
#include "ag/detail/split_chooser.h"

namespace ag::detail {

// AG_LOOP_SPLITS=size (the default), measure, or 0 (never: every compiled loop on the calling
// thread).
enum class LoopSplitsMode { BySize, Measure, Never };
LoopSplitsMode loop_splits_mode();
// Reads AG_LOOP_SPLITS (ValueError for another value): with AG_NUM_THREADS (ensure_threads).
void read_loop_splits_mode_from_env();
// For tests: sets the mode, returns the previous one.
LoopSplitsMode set_loop_splits_mode(LoopSplitsMode mode);

// A loop's identity for the trial: its worker (one per loop in compiled code; loops the
// optimizer merged, or compiles that share a kernel, share it) and its trip count.
struct LoopSiteKey {
  const void* worker = nullptr;
  int64_t n = 0;
  bool operator==(const LoopSiteKey&) const = default;
};
std::string describe_loop_site(const LoopSiteKey& key);
using LoopSplitsChooser = SplitChooser<LoopSiteKey>;
LoopSplitsChooser& loop_splits_chooser();

// parallel_for_erased for compiled loops: a loop the pool would split runs split, or split or
// whole as the loop's trial decides (LoopSplitsMode::Measure), or whole (Never).
void parallel_for_measured(int64_t n, int64_t grain, RangeFn fn, void* closure, int64_t unit);

}  // namespace ag::detail
