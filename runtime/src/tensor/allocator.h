// A caching allocator for large tensor buffers. Fresh large blocks cost page faults (a 64 MB
// buffer: ~30 ms here, against ~5 ms to fill it), so freed blocks are kept and reused.
#pragma once

#include <cstddef>

namespace ag::detail {

// Threshold above which buffers are pooled; smaller ones use aligned operator new.
inline constexpr size_t kPoolThreshold = 256 * 1024;

// 64-byte-aligned block of at least `bytes`. `bytes` >= kPoolThreshold.
void* pool_allocate(size_t bytes);
void pool_free(void* p, size_t bytes);
// Small 64-byte-aligned blocks (tensor headers + data below kSmallBlockMax bytes) come from a
// per-thread free list per 64-byte size class: aligned operator new costs ~100 ns here, which is
// most of a cached call of a compiled function returning a small tensor.
inline constexpr size_t kSmallBlockMax = 1024;
void* small_allocate(size_t bytes);
void small_free(void* p, size_t bytes);

// Bytes currently cached (free, ready for reuse).
size_t pool_cached_bytes();
// Frees every cached block.
void pool_trim();

}  // namespace ag::detail
