// Caching allocator: size-rounded free lists of mmap'ed blocks, capped in total cached bytes.
#include "allocator.h"

#include <sys/mman.h>

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

// Per-thread free lists of small aligned blocks. The cache object is reached through a trivially
// destructible pointer so that blocks freed during thread or static teardown (after the cache
// is gone) simply go back to operator delete.
constexpr size_t kSmallClasses = kSmallBlockMax / 64;
constexpr int kSmallPerClass = 32;

struct SmallCache {
  void* blocks[kSmallClasses][kSmallPerClass];
  int count[kSmallClasses] = {};
  ~SmallCache();
};

thread_local SmallCache* t_small = nullptr;
thread_local bool t_small_dead = false;

SmallCache::~SmallCache() {
  for (size_t c = 0; c < kSmallClasses; ++c)
    for (int i = 0; i < count[c]; ++i) ::operator delete(blocks[c][i], std::align_val_t(64));
  t_small = nullptr;
  t_small_dead = true;
}

SmallCache* small_cache() {
  if (t_small || t_small_dead) return t_small;
  thread_local SmallCache cache;
  t_small = &cache;
  return t_small;
}

size_t small_class(size_t bytes) { return (bytes + 63) / 64 - 1; }

}  // namespace

void* small_allocate(size_t bytes) {
  if (SmallCache* c = small_cache()) {
    const size_t k = small_class(bytes);
    if (c->count[k] > 0) return c->blocks[k][--c->count[k]];
  }
  return ::operator new((small_class(bytes) + 1) * 64, std::align_val_t(64));
}

void small_free(void* p, size_t bytes) {
  if (SmallCache* c = small_cache()) {
    const size_t k = small_class(bytes);
    if (c->count[k] < kSmallPerClass) {
      c->blocks[k][c->count[k]++] = p;
      return;
    }
  }
  ::operator delete(p, std::align_val_t(64));
}

void* pool_allocate(size_t bytes) {
  const size_t size = round_size(bytes);
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
  return map_block(size);
}

void pool_free(void* p, size_t bytes) {
  const size_t size = round_size(bytes);
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
