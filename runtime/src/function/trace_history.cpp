// See trace_history.h.
#include "trace_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "ag/detail/log.h"
#include "concrete.h"

namespace ag::detail {

void TraceHistory::note_trace(const std::string& reason, const StatCounters& stats) {
  const uint32_t h = ((recent_.load(std::memory_order_relaxed) << 1) | 1) & kWindowMask;
  recent_.store(h, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  ++traces_noted_;
  const int traced = std::popcount(h);
  if (traced < 5 || warnings_ >= 2) return;
  // The calls so far: the traced ones plus the cache hits the call path already counts (so the
  // hot path does no extra work for this message).
  const int64_t calls =
      traces_noted_ + stats.memory_hits.load(std::memory_order_relaxed) + stats.inline_hits.load(std::memory_order_relaxed) +
      stats.direct_calls.load(std::memory_order_relaxed);
  const int64_t window = std::max<int64_t>(traced, std::min<int64_t>(10, calls));
  ++warnings_;
  log_line(fmt::format(
      "agc: WARNING: {} of the last {} calls of Function '{}' traced a new graph (the latest because {}). Tracing is "
      "expensive. Common causes: (1) tensors of many different shapes: give FunctionOptions::input_signature unknown "
      "dims (-1) or set reduce_retracing; (2) plain C++ numbers that change between calls: pass ag::Tensor instead; "
      "(3) calling ag::function repeatedly in a loop: create the Function once.",
      traced, window, function_name_, reason));
}

void TraceHistory::record(TraceEvent e) {
  std::lock_guard lock(mu_);
  if (events_.size() >= kMaxEvents) events_.pop_front();
  events_.push_back(std::move(e));
}

std::vector<TraceEvent> TraceHistory::events() const {
  std::lock_guard lock(mu_);
  return {events_.begin(), events_.end()};
}

}  // namespace ag::detail
