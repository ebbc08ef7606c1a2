// Hazard slots with asymmetric fences: how a cached call runs a concrete function without
// touching its reference count.
//
// A caller that found a cache entry through the inline cache (SignatureCache::find_inline)
// publishes the entry in its thread's slot with a plain store, then reads the inline cache again:
// if the entry is still there, no writer can free it until the slot is cleared. A writer that
// drops an entry first unpublishes it, then makes every running thread of the process execute a
// full fence (membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED), slow but paid on evictions only
// (docs/performance.md, "Measured decisions": membarrier fence). It then scans the slots; an
// entry that a slot still holds is kept and checked again at the next drop. The caller's side
// costs two plain stores and a load, where copying a shared_ptr costs two locked instructions
// (the scheme of folly's asymmetric hazard pointers).
//
// Where membarrier is not available (seccomp, ThreadSanitizer builds, AG_HAZARD_FENCES=1), both
// sides issue a full fence instead: still correct. On x86 the caller's is a locked instruction,
// not MFENCE (full_fence below).
//
// Slots are indexed by the thread's StripedCounter stripe; a thread without one (more than
// kStripes threads alive) takes the locked path.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "striped_counter.h"

namespace ag::detail::hazard {

inline constexpr uint32_t kSlots = StripedCounter::kStripes;

struct alignas(8) Slot {
  std::atomic<const void*> held{nullptr};
};
// Interleaved like the stripes: the first threads' slots are on different cache lines.
inline Slot g_slots[kSlots];

#if defined(__SANITIZE_THREAD__)
#define AG_HAZARD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AG_HAZARD_TSAN 1
#endif
#endif

// A full fence. On x86, a locked OR of zero into the top of the stack orders every load and
// store as MFENCE does (Linux's smp_mb() and GCC's seq_cst fences use the same instruction),
// without MFENCE's cost: MFENCE also waits for non-temporal stores and stops dispatch on AMD
// cores, and the cached call in fence mode was slower with it than with this
// (docs/performance.md, "Measured decisions": locked fence). ThreadSanitizer builds keep the
// standard fence, which TSan models.
inline void full_fence() {
#if defined(__x86_64__) && !defined(AG_HAZARD_TSAN)
  __asm__ __volatile__("lock orq $0, (%%rsp)" ::: "memory", "cc");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// -1: not decided yet; 1: membarrier registered (callers need only a compiler fence); 0: fences.
inline constinit std::atomic<int> g_mode{-1};
// Decides the mode (registers for membarrier when it can), once; waits for a decision under way.
int decide_mode();
// Starts deciding on a thread of its own, once per process (the first Function does): the
// registration makes the kernel wait for every CPU, 6-20 ms here, and decided on a cached call's
// path it stalled the third call of every fresh process's first Function (docs/performance.md,
// "Measured decisions": membarrier registration).
void decide_mode_in_background();

// The caller's fence between publishing its slot and re-reading what it protects. Until the mode
// is decided, a full fence: correct whichever way the writer's side turns out.
inline void caller_fence() {
  if (g_mode.load(std::memory_order_relaxed) == 1) [[likely]]
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    full_fence();
}

// The writer's fence between unpublishing a pointer and scanning the slots.
void writer_fence();

// After writer_fence(): whether any thread's slot holds `p`.
bool held_by_any_thread(const void* p);

// Holds the calling thread's slot for one call; empty when the thread has no free slot (none
// claimed, or a call of a Function is already running on this thread).
class SlotGuard {
 public:
  // A thread without a stripe yet gets none here (the cached call has no call to make); its
  // first table lookup claims one (SignatureCache::find).
  SlotGuard() {
    const uint32_t s = StripedCounter::claimed_stripe();
    if (s < kSlots && !g_slots[s].held.load(std::memory_order_relaxed)) [[likely]] {
      slot_ = &g_slots[s];
      index_ = s;
    }
  }
  ~SlotGuard() { release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

  explicit operator bool() const { return slot_ != nullptr; }
  uint32_t index() const { return index_; }  // the thread's stripe (when it holds a slot)
  // Publishes `p` and fences; the caller then checks that `p` is still reachable.
  void hold(const void* p) {
    slot_->held.store(p, std::memory_order_relaxed);
    caller_fence();
  }
  // Release order: the caller's reads of the held object happen before a writer that sees the
  // slot cleared frees it.
  void release() {
    if (slot_) slot_->held.store(nullptr, std::memory_order_release);
  }
  // Hands the held slot to a callee that clears it itself (FunctionCore::run_held, reached by a
  // tail call); the guard then holds nothing.
  std::atomic<const void*>* hand_over() { return &std::exchange(slot_, nullptr)->held; }
  // Forgets the slot without clearing it (find_inline cleared it on a miss).
  void dismiss() { slot_ = nullptr; }

 private:
  Slot* slot_ = nullptr;
  uint32_t index_ = 0;
};

}  // namespace ag::detail::hazard
