// The small-block cache: an eager op on small tensors allocates a TensorImpl and a Storage with
// its inline buffer; glibc's aligned malloc is slow for that pair (memalign splits and later
// consolidates chunks). Freed blocks go to a per-thread free list of their size class
// (docs/performance.md, "Measured decisions": small-block cache).
#include <cstdint>
#include <new>

#include "allocator.h"

namespace ag::detail {
namespace {

constexpr size_t kGranule = 64;
constexpr size_t kClasses = kSmallMax / kGranule;
constexpr size_t kCachedBytesPerClass = 64 * 1024;  // caps what one idle thread holds

size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }
size_t class_bytes(size_t c) { return (c + 1) * kGranule; }

struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible, so that reaching it costs no TLS guard and it stays readable while
// thread_local and static objects are destroyed. Its blocks are given back by a Reaper.
struct Cache {
  FreeBlock* head[kClasses];
  uint32_t count[kClasses];
  bool reaper_armed;
  bool gone;  // after the Reaper ran: blocks go straight back to operator delete
};
thread_local Cache t_cache;

// Frees the thread's cached blocks when the thread ends. Constructed (and its destructor
// registered) the first time the thread caches a block.
struct Reaper {
  ~Reaper() {
    Cache& cache = t_cache;
    cache.gone = true;
    for (size_t c = 0; c < kClasses; ++c)
      while (FreeBlock* b = cache.head[c]) {
        cache.head[c] = b->next;
        ::operator delete(static_cast<void*>(b), std::align_val_t(kGranule));
      }
  }
  void arm() {}
};
thread_local Reaper t_reaper;

}  // namespace

void* small_allocate(size_t bytes) {
  const size_t c = class_of(bytes ? bytes : 1);
  Cache& cache = t_cache;
  if (FreeBlock* b = cache.head[c]) {
    cache.head[c] = b->next;
    --cache.count[c];
    return b;
  }
  return ::operator new(class_bytes(c), std::align_val_t(kGranule));
}

void small_free(void* p, size_t bytes) {
  const size_t c = class_of(bytes ? bytes : 1);
  Cache& cache = t_cache;
  if (!cache.gone && cache.count[c] * class_bytes(c) < kCachedBytesPerClass) {
    if (!cache.reaper_armed) {
      cache.reaper_armed = true;
      t_reaper.arm();  // odr-use: constructs the thread's Reaper
    }
    auto* b = static_cast<FreeBlock*>(p);
    b->next = cache.head[c];
    cache.head[c] = b;
    ++cache.count[c];
    return;
  }
  ::operator delete(p, std::align_val_t(kGranule));
}

}  // namespace ag::detail
