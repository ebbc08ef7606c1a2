// The thread pool shared by eager kernels and compiled code (docs/jit.md, "Threads").
//
// parallel_for splits [0, n) into contiguous chunks of at least `grain` items and runs them on
// the pool's threads and on the calling thread; it returns when every chunk is done and rethrows
// the first exception a chunk threw. With one thread, a range below two grains, or when called
// from a pool thread (nested parallelism), it calls f(0, n) on the caller: the serial path costs
// one branch.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ag/platform.h"

namespace ag::detail {

// Elements per chunk of a parallel elementwise loop, eager or compiled: a loop splits from two
// grains up. Below ~64K float elements a split saves less than handing chunks to a pool thread
// costs (bench/runtime's thread rows; docs/jit.md, "Threads", "The grain").
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 15;
// The fixed chunk of a full reduction, eager or compiled (from two chunks up): its partials are
// combined in order, so the chunk decides the float rounding, the same for every thread count.
// Not the grain: moving the grain must not change any result.
inline constexpr int64_t kFullReductionChunk = int64_t{1} << 17;

// The pool size set by ag::set_num_threads / AG_NUM_THREADS (1 = serial).
int parallel_threads();

// Puts the calling (pool) thread in the denormal mode ag::set_flush_denormals last chose
// (denormals.cpp): one relaxed load when it already is.
void follow_denormal_mode();

// Loops split over more than one thread since the process started (tests check that the
// parallel path ran).
int64_t parallel_loops_split();
// Parts of split loops a lingering worker took from its slot rather than the pool's queue
// (thread_pool.cpp, kLinger): tests check that back-to-back loops found the worker awake.
int64_t parallel_loops_lingered();

// The type-erased form, which compiled code calls through agc_rt_parallel_for. Chunks begin at
// multiples of `unit` items (a compiled loop over one flat dim: where a vectorized loop and its
// scalar remainder split each chunk must not move with the thread count; docs/jit.md,
// "Determinism"). `unit` must not exceed `grain`.
using RangeFn = void (*)(void* closure, int64_t begin, int64_t end);
void parallel_for_erased(int64_t n, int64_t grain, RangeFn fn, void* closure, int64_t unit = 1);
// Whether parallel_for_erased(n, grain, ...) called here would split: more than one thread, at
// least two grains, and not on a pool thread (where a loop runs whole).
bool parallel_for_would_split(int64_t n, int64_t grain);

template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n < 2 * grain || parallel_threads() <= 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  parallel_for_erased(
      n, grain, [](void* c, int64_t b, int64_t e) { (*static_cast<Fn*>(c))(b, e); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// Sets the pool size for a scope, then restores the previous one (tests, benchmarks).
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(int n) : saved_(get_num_threads()) { set_num_threads(n); }
  ~ScopedNumThreads() { set_num_threads(saved_); }
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;

 private:
  int saved_;
};

}  // namespace ag::detail
