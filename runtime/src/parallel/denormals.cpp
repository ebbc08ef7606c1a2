// ag::set_flush_denormals: the x86 MXCSR's flush-to-zero (FTZ) and denormals-are-zero (DAZ)
// bits, set on the calling thread at once and on each pool thread at its next parallel loop
// (the mode is per thread, and a pool thread runs only what parallel_for hands it).
#include <atomic>

#include "ag/detail/parallel.h"
#include "ag/platform.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define AG_HAS_MXCSR 1
#else
#define AG_HAS_MXCSR 0
#endif

namespace ag {
namespace {

#if AG_HAS_MXCSR
constexpr unsigned kFlushBits = 0x8040;  // FTZ (bit 15) and DAZ (bit 6)

void set_thread_mode(bool on) { _mm_setcsr(on ? _mm_getcsr() | kFlushBits : _mm_getcsr() & ~kFlushBits); }
#endif

std::atomic<bool> g_flush{false};  // what the pool threads follow
thread_local bool t_flush = false;  // what this thread was last set to here

}  // namespace

bool set_flush_denormals(bool on) {
#if AG_HAS_MXCSR
  set_thread_mode(on);
  t_flush = on;
  g_flush.store(on, std::memory_order_relaxed);
  return true;
#else
  (void)on;
  return false;
#endif
}

bool flush_denormals() {
#if AG_HAS_MXCSR
  return (_mm_getcsr() & kFlushBits) == kFlushBits;
#else
  return false;
#endif
}

namespace detail {

void follow_denormal_mode() {
#if AG_HAS_MXCSR
  const bool want = g_flush.load(std::memory_order_relaxed);
  if (want == t_flush) return;
  set_thread_mode(want);
  t_flush = want;
#endif
}

}  // namespace detail
}  // namespace ag
