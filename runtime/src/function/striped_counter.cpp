// Stripe ownership for StripedCounter: a free list of stripes, and a per-thread handler that
// returns the thread's stripe when it exits.
#include "striped_counter.h"

#include <mutex>
#include <vector>

namespace ag::detail {
namespace {

struct StripeRegistry {
  std::mutex mu;
  std::vector<uint32_t> free;  // the next stripe to hand out is at the back
};

StripeRegistry& registry() {
  static StripeRegistry* r = [] {  // never destroyed: threads may exit during static destruction
    auto* reg = new StripeRegistry;
    // Stripes are 8-byte slots, 8 to a cache line: the first threads get slots on different
    // lines, so concurrent callers of one Function do not write the same line.
    constexpr uint32_t kPerLine = 8, kLines = StripedCounter::kStripes / kPerLine;
    for (uint32_t i = StripedCounter::kStripes; i-- > 0;) reg->free.push_back((i % kLines) * kPerLine + i / kLines);
    return reg;
  }();
  return *r;
}

}  // namespace

// Returns the thread's stripe when the thread exits.
struct StripeRelease {
  uint32_t stripe = StripedCounter::kStripes;
  ~StripeRelease() { StripedCounter::release_thread_stripe(stripe); }
};
namespace {
thread_local StripeRelease t_release;
}  // namespace

uint32_t StripedCounter::claim_stripe() {
  uint32_t s = kStripes;  // none left: this thread counts on the shared atomic
  {
    std::lock_guard lock(registry().mu);
    if (!registry().free.empty()) {
      s = registry().free.back();
      registry().free.pop_back();
    }
  }
  if (s < kStripes) t_release.stripe = s;  // constructs the thread's handler
  t_stripe = s;
  return s;
}

void StripedCounter::release_thread_stripe(uint32_t stripe) {
  t_stripe = kStripes;  // counts made later (other thread_local destructors) go to the shared atomic
  if (stripe >= kStripes) return;
  std::lock_guard lock(registry().mu);  // orders this thread's last counts before the next owner's
  registry().free.push_back(stripe);
}

}  // namespace ag::detail
