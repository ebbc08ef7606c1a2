// Counters of the large-buffer pool (buffers of 256 KB and more), for tests and benchmarks that
// check memory reuse, e.g. that the interpreter frees values after their last use.
#pragma once

#include <cstddef>

namespace ag::detail {

struct PoolStats {
  size_t live_bytes = 0;       // handed out and not yet freed (rounded block sizes)
  size_t peak_live_bytes = 0;  // the most live at once since the last reset_pool_peak()
  size_t cached_bytes = 0;     // freed blocks kept for reuse
};
PoolStats pool_stats();
// Starts a new peak measurement from the current live bytes.
void reset_pool_peak();

}  // namespace ag::detail
