// Caching allocators: one for large tensor buffers, one for small blocks. Fresh large blocks cost
// page faults, more than filling them does, so freed blocks are kept and reused
// (docs/performance.md, "Measured decisions": large-buffer pool).
#pragma once

#include <cstddef>

namespace ag::detail {

// Threshold above which buffers are pooled; smaller ones use aligned operator new.
inline constexpr size_t kPoolThreshold = 256 * 1024;

// 64-byte-aligned block of at least `bytes`. `bytes` >= kPoolThreshold.
void* pool_allocate(size_t bytes);
void pool_free(void* p, size_t bytes);
// Bytes currently cached (free, ready for reuse) in the shared pool and this thread's front cache.
size_t pool_cached_bytes();
// Unmaps every block cached in the shared pool and in this thread's front cache; other threads
// unmap their front caches at their next large allocation or free.
void pool_trim();

// Small blocks (tensor headers, and buffers with their Storage header up to kSmallMax bytes):
// per-thread free lists by 64-byte size class, so that an eager op on small tensors costs no
// malloc. 64-byte aligned. A block may be freed on another thread than the one that allocated it.
inline constexpr size_t kSmallMax = 4096;
void* small_allocate(size_t bytes);
void small_free(void* p, size_t bytes);

}  // namespace ag::detail
