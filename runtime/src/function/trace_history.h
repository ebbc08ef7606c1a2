// A Function's trace history (the HTML report's "retrace history") and TensorFlow's retracing
// warning: which recent calls traced, and the events of the last kMaxEvents traces and evictions.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "ag/detail/function_inspection.h"

namespace ag::detail {

struct StatCounters;

class TraceHistory {
 public:
  explicit TraceHistory(const std::string& function_name) : function_name_(function_name) {}

  // A call served without tracing. Racy on purpose: the bits are a heuristic, and a cached call
  // must not pay for a locked instruction.
  void note_hit() {
    const uint32_t h = recent_.load(std::memory_order_relaxed);
    if (h) [[unlikely]]  // zero once the last traces are out of the window: a loop's calls skip the store
      recent_.store((h << 1) & kWindowMask, std::memory_order_relaxed);
  }
  // A call of the Function's own that traced (not one inside another Function's trace): warns
  // when most recent calls traced. `stats` counts the cached calls so far.
  void note_trace(const std::string& reason, const StatCounters& stats);
  void record(TraceEvent e);
  std::vector<TraceEvent> events() const;  // oldest first
  static constexpr size_t kMaxEvents = 1000;

 private:
  static constexpr uint32_t kWindowMask = 0x3ff;  // the last 10 calls
  const std::string& function_name_;
  std::atomic<uint32_t> recent_{0};  // 1 bit per recent call: traced or not
  mutable std::mutex mu_;
  int64_t traces_noted_ = 0;  // calls that traced (the warning's window)
  int warnings_ = 0;
  std::deque<TraceEvent> events_;
};

}  // namespace ag::detail
