// StripedCounter: an exact event counter whose increment is a plain load and store (no lock
// prefix), for the cached-call path's hit count.
//
// Each thread owns one stripe (a slot of every counter) while it lives: it is the stripe's only
// writer, so a relaxed load + store counts exactly and costs less than a shared fetch_add
// (docs/performance.md, "Measured decisions": striped counter). Threads beyond kStripes, and
// threads past their exit handler, add to a shared atomic instead. A stripe freed by an exiting
// thread goes to the next new thread; the free list's mutex orders the two threads' writes.
// load() sums every stripe.
#pragma once

#include <atomic>
#include <cstdint>

namespace ag::detail {

struct StripeRelease;

class StripedCounter {
 public:
  static constexpr uint32_t kStripes = 32;

  // The signature of std::atomic's, so the counter can replace one; always relaxed.
  void fetch_add(int64_t n, std::memory_order = std::memory_order_relaxed) {
    const uint32_t s = current_stripe();
    if (s < kStripes) [[likely]] {
      std::atomic<int64_t>& c = stripes_[s];  // NOLINT: a Stripe is its atomic
      c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
      shared_.fetch_add(n, std::memory_order_relaxed);
    }
  }
  // fetch_add from the thread that owns `stripe` (its current_stripe(), below kStripes): the
  // cached call knows it already (its hazard slot's index).
  void add_on_own_stripe(uint32_t stripe, int64_t n) {
    std::atomic<int64_t>& c = stripes_[stripe];  // NOLINT: a Stripe is its atomic
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  int64_t load(std::memory_order = std::memory_order_relaxed) const {
    int64_t sum = shared_.load(std::memory_order_relaxed);
    for (const auto& c : stripes_) sum += c.load(std::memory_order_relaxed);
    return sum;
  }

  // The calling thread's stripe, claimed on its first use; kStripes or more: none. The hazard
  // slots of the inline call cache (hazard_slots.h) are indexed by it too.
  static uint32_t current_stripe() {
    const uint32_t s = t_stripe;
    return s != kUnclaimed ? s : claim_stripe();
  }
  // current_stripe() without claiming one: kStripes or more when the thread has none (yet).
  static uint32_t claimed_stripe() { return t_stripe; }

 private:
  static uint32_t claim_stripe();
  friend struct StripeRelease;
  static void release_thread_stripe(uint32_t stripe);

  static constexpr uint32_t kUnclaimed = ~0u;
  static inline constinit thread_local uint32_t t_stripe = kUnclaimed;

  // A cache line per stripe: threads on different stripes never write the same line.
  struct alignas(64) Stripe : std::atomic<int64_t> {};
  Stripe stripes_[kStripes] = {};
  std::atomic<int64_t> shared_{0};
};

}  // namespace ag::detail
