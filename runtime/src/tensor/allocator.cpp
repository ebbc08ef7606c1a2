// Caching allocator: size-rounded free lists of mmap'ed blocks, capped in total cached bytes.
#include "allocator.h"

#include "ag/detail/memory_stats.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace ag::detail {
namespace {

// Sizes round up to a multiple of 1/8 of their power of two: at most 12.5% waste, and a
// stream of similar sizes reuses the same blocks.
size_t round_size(size_t bytes) {
  size_t p = 1;
  while (p < bytes) p <<= 1;
  size_t step = p / 8 < 4096 ? 4096 : p / 8;
  return (bytes + step - 1) / step * step;
}

size_t cache_limit() {
  static const size_t limit = [] {
    const char* e = std::getenv("AG_ALLOCATOR_CACHE_MB");
    return (e ? std::strtoull(e, nullptr, 10) : 2048ull) << 20;
  }();
  return limit;
}

struct Pool {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;  // rounded size -> blocks
  size_t cached = 0;
};

// Live and peak bytes: one relaxed atomic add per buffer of at least 256 KB, noise next to
// filling it.
std::atomic<size_t> g_live{0}, g_peak{0};

void count_allocated(size_t size) {
  const size_t live = g_live.fetch_add(size, std::memory_order_relaxed) + size;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: tensors may be freed during static destruction
  return *p;
}

void* map_block(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (size >= (2u << 20)) madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace

void* pool_allocate(size_t bytes) {
  const size_t size = round_size(bytes);
  count_allocated(size);
  Pool& pl = pool();
  {
    std::lock_guard lock(pl.mu);
    auto it = pl.free_blocks.find(size);
    if (it != pl.free_blocks.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      pl.cached -= size;
      return p;
    }
  }
  try {
    return map_block(size);
  } catch (...) {
    g_live.fetch_sub(size, std::memory_order_relaxed);
    throw;
  }
}

void pool_free(void* p, size_t bytes) {
  const size_t size = round_size(bytes);
  g_live.fetch_sub(size, std::memory_order_relaxed);
  Pool& pl = pool();
  {
    std::lock_guard lock(pl.mu);
    if (pl.cached + size <= cache_limit()) {
      pl.free_blocks[size].push_back(p);
      pl.cached += size;
      return;
    }
  }
  munmap(p, size);
}

size_t pool_cached_bytes() {
  std::lock_guard lock(pool().mu);
  return pool().cached;
}

void pool_trim() {
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  for (auto& [size, blocks] : pl.free_blocks)
    for (void* p : blocks) munmap(p, size);
  pl.free_blocks.clear();
  pl.cached = 0;
}

}  // namespace ag::detail

namespace ag::detail {

PoolStats pool_stats() {
  PoolStats s;
  s.live_bytes = g_live.load(std::memory_order_relaxed);
  s.peak_live_bytes = g_peak.load(std::memory_order_relaxed);
  s.cached_bytes = pool_cached_bytes();
  return s;
}

void reset_pool_peak() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace ag::detail
