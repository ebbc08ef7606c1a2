// The caching allocator of large tensor buffers (256 KB and more): what it holds, and giving
// its cache back to the operating system (torch.cuda.empty_cache, for host memory).
#pragma once

#include <cstddef>

namespace ag {

struct MemoryStats {
  size_t live_bytes = 0;       // large buffers in use (rounded block sizes)
  size_t peak_live_bytes = 0;  // the most in use at once since the start or reset_peak_memory()
  size_t cached_bytes = 0;     // freed blocks kept for reuse: the shared pool and this thread's cache
};
MemoryStats memory_stats();
// Starts a new peak measurement from the bytes in use now.
void reset_peak_memory();

// Unmaps the freed blocks kept for reuse: those of the process-wide pool and of the calling
// thread now, those each other thread keeps for itself (at most 4 blocks, 1/8 of
// AG_ALLOCATOR_CACHE_MB) at its next large allocation or free. Buffers in use are not touched;
// later allocations map fresh blocks (page faults) until the cache fills again.
void release_cached_memory();

}  // namespace ag
