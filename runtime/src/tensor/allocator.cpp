// Caching allocator for large buffers: a per-thread front cache of a few blocks (no lock: the
// steady state of a loop or of repeated Function calls allocates and frees the same sizes on
// one thread), behind a shared pool of size-rounded free lists, capped in total cached bytes.
#include "allocator.h"

#include "ag/detail/fork_safety.h"
#include "ag/detail/memory_stats.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace ag::detail {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

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

// Live and peak bytes: one relaxed atomic add per buffer of at least 256 KB, noise next to
// filling it.
std::atomic<size_t> g_live{0}, g_peak{0};

void count_allocated(size_t size) {
  const size_t live = g_live.fetch_add(size, std::memory_order_relaxed) + size;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

// ---- the shared pool ----

struct Pool {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;  // rounded size -> blocks
  size_t cached = 0;
};

Pool& pool();

// fork(): the pool's lock is taken around it, so that the child never finds it held by a
// thread it does not have.
void lock_pool() { pool().mu.lock(); }
void unlock_pool() { pool().mu.unlock(); }

Pool& pool() {
  static Pool* p = [] {
    set_fork_hooks(ForkStage::Allocator, lock_pool, unlock_pool, unlock_pool);
    return new Pool;  // never destroyed: tensors may be freed during static destruction
  }();
  return *p;
}

// Blocks of 2 MB or more start on a 2 MB boundary, so that transparent huge pages (asked for
// with MADV_HUGEPAGE) cover all of their whole 2 MB stretches: a fresh 4 MB output then takes
// 2 page faults instead of 1024. The alignment is had by over-mapping and unmapping the
// excess, which costs address space only for the duration of the call.
void* map_block(size_t size) {
  const bool huge = size >= kHugePage;
  const size_t span = huge ? size + kHugePage : size;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (!huge) return p;
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(p, aligned - start);
  const uintptr_t end = start + span, used_end = aligned + size;
  if (end > used_end) munmap(reinterpret_cast<void*>(used_end), end - used_end);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(aligned);
}

void* pool_take(size_t size) {
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  auto it = pl.free_blocks.find(size);
  if (it == pl.free_blocks.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  pl.cached -= size;
  return p;
}

void pool_give(void* p, size_t size) {
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

// ---- the per-thread front cache ----

constexpr size_t kFrontSlots = 4;

// Bumped by release_cached_memory(): a thread whose front cache saw an older value unmaps its
// blocks at its next large allocation or free (another thread's cache is never touched).
std::atomic<uint64_t> g_release_epoch{0};

size_t front_limit() { return cache_limit() / 8; }  // 256 MB by default: a 16M-float output fits

// Trivially destructible (no TLS guard on access, readable during thread exit), like the
// small-block cache; a Reaper hands its blocks to the shared pool when the thread ends.
struct FrontCache {
  void* block[kFrontSlots];
  size_t size[kFrontSlots];
  size_t count;
  size_t bytes;
  bool reaper_armed;
  bool gone;  // after the Reaper ran: frees go to the shared pool
  uint64_t release_epoch;
};
thread_local FrontCache t_front;

void unmap_front(FrontCache& f) {
  for (size_t i = 0; i < f.count; ++i) munmap(f.block[i], f.size[i]);
  f.count = f.bytes = 0;
}

// The thread's front cache, emptied first if release_cached_memory() ran since it last looked.
FrontCache& front() {
  FrontCache& f = t_front;
  const uint64_t epoch = g_release_epoch.load(std::memory_order_relaxed);
  if (f.release_epoch != epoch) {
    unmap_front(f);
    f.release_epoch = epoch;
  }
  return f;
}

struct FrontReaper {
  ~FrontReaper() {
    FrontCache& f = t_front;
    f.gone = true;
    for (size_t i = 0; i < f.count; ++i) pool_give(f.block[i], f.size[i]);
    f.count = f.bytes = 0;
  }
  void arm() {}
};
thread_local FrontReaper t_front_reaper;

void* front_take(size_t size) {
  FrontCache& f = front();
  for (size_t i = f.count; i-- > 0;)  // most recently freed first
    if (f.size[i] == size) {
      void* p = f.block[i];
      for (size_t j = i + 1; j < f.count; ++j) f.block[j - 1] = f.block[j], f.size[j - 1] = f.size[j];
      --f.count;
      f.bytes -= size;
      return p;
    }
  return nullptr;
}

bool front_give(void* p, size_t size) {
  FrontCache& f = front();
  if (f.gone || size > front_limit()) return false;
  if (!f.reaper_armed) {
    f.reaper_armed = true;
    t_front_reaper.arm();  // odr-use: constructs the thread's reaper
  }
  // Full (in slots or bytes): the least recently freed blocks move to the shared pool.
  while (f.count && (f.count == kFrontSlots || f.bytes + size > front_limit())) {
    pool_give(f.block[0], f.size[0]);
    f.bytes -= f.size[0];
    for (size_t j = 1; j < f.count; ++j) f.block[j - 1] = f.block[j], f.size[j - 1] = f.size[j];
    --f.count;
  }
  f.block[f.count] = p;
  f.size[f.count] = size;
  ++f.count;
  f.bytes += size;
  return true;
}

}  // namespace

void* pool_allocate(size_t bytes) {
  const size_t size = round_size(bytes);
  count_allocated(size);
  if (void* p = front_take(size)) return p;
  if (void* p = pool_take(size)) return p;
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
  if (!front_give(p, size)) pool_give(p, size);
}

size_t pool_cached_bytes() {
  const size_t own = front().bytes;
  std::lock_guard lock(pool().mu);
  return pool().cached + own;
}

void pool_trim() {
  g_release_epoch.fetch_add(1, std::memory_order_relaxed);
  front();  // this thread's blocks now
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  for (auto& [size, blocks] : pl.free_blocks)
    for (void* p : blocks) munmap(p, size);
  pl.free_blocks.clear();
  pl.cached = 0;
}

PoolStats pool_stats() {
  PoolStats s;
  s.live_bytes = g_live.load(std::memory_order_relaxed);
  s.peak_live_bytes = g_peak.load(std::memory_order_relaxed);
  s.cached_bytes = pool_cached_bytes();
  return s;
}

void reset_pool_peak() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace ag::detail

namespace ag {

MemoryStats memory_stats() { return detail::pool_stats(); }
void reset_peak_memory() { detail::reset_pool_peak(); }
void release_cached_memory() { detail::pool_trim(); }

}  // namespace ag
