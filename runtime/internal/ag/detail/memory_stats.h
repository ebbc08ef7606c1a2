// Counters of the large-buffer pool (buffers of 256 KB and more), for tests and benchmarks that
// check memory reuse, e.g. that the interpreter frees values after their last use. The public
// face is ag/memory.h.
#pragma once

#include "ag/memory.h"

namespace ag::detail {

using PoolStats = MemoryStats;
PoolStats pool_stats();
// Starts a new peak measurement from the current live bytes.
void reset_pool_peak();

}  // namespace ag::detail
