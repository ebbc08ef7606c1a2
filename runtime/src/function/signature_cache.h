// SignatureCache: key -> concrete function, with lock-free lookups.
//
// Two levels. The inline cache holds, per thread (per StripedCounter stripe), the entry that
// thread's last table lookup found (a monomorphic cache, as at a JavaScript engine's call
// sites; per thread, so threads calling with different signatures do not evict each other's
// and write no shared line): a call whose key equals its key
// runs that entry's concrete function under a hazard slot (hazard_slots.h), with no locked
// instruction and no reference count. Otherwise the table: readers pin it through an epoch
// counter, look up, copy the entry's shared_ptr and unpin. Writers (serialized by the owner's
// mutex) publish a new immutable table, flip the epoch and wait for readers of the old epoch to
// drain (nanoseconds: readers never run user code while pinned) before freeing the old table;
// an entry they drop is unpublished from the inline cache and freed once no hazard slot holds it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "hazard_slots.h"

namespace ag::detail {

class ConcreteCore;

class SignatureCache {
 public:
  struct Entry {
    std::vector<uint64_t> key;
    uint64_t hash = 0;
    std::shared_ptr<ConcreteCore> fn;
    bool alias = false;  // a call key resolved to a more general concrete function
    mutable std::atomic<uint64_t> last_used{0};
  };

  SignatureCache();
  ~SignatureCache();
  SignatureCache(const SignatureCache&) = delete;
  SignatureCache& operator=(const SignatureCache&) = delete;

  // Lock-free; null when absent. Marks the entry used and makes it the inline entry.
  std::shared_ptr<ConcreteCore> find(const uint64_t* key, size_t n, uint64_t hash) const;

  // This thread's inline entry when `has_key(entry key words, count)` holds, held by `guard` (alive until
  // the guard releases it); else null. Marks the entry used. No locked instruction.
  template <class HasKey>
  [[gnu::always_inline]] const Entry* find_inline(hazard::SlotGuard& guard, HasKey&& has_key) const {
    if (!guard) [[unlikely]]
      return nullptr;
    const std::atomic<const Entry*>& slot = inline_[guard.index()].entry;
    const Entry* e = slot.load(std::memory_order_acquire);
    if (!e) return nullptr;
    guard.hold(e);
    if (slot.load(std::memory_order_acquire) != e || !has_key(e->key.data(), e->key.size())) {
      guard.release();
      return nullptr;
    }
    touch(*e);
    return e;
  }

  // Writers (hold the owner's mutex). The entry list is the source of truth.
  const std::vector<std::shared_ptr<Entry>>& entries() const { return entries_; }
  // Adds `e`; when `replaced` is given, that entry is dropped in the same table update.
  void insert(std::shared_ptr<Entry> e, const Entry* replaced = nullptr);
  // Removes entries for which `drop` is true; returns them.
  template <class Pred>
  std::vector<std::shared_ptr<Entry>> remove_if(Pred drop) {
    std::vector<std::shared_ptr<Entry>> kept, removed;
    for (auto& e : entries_) (drop(*e) ? removed : kept).push_back(e);
    entries_ = std::move(kept);
    publish();
    retire(removed);
    return removed;
  }
  uint64_t now() const { return clock_.load(std::memory_order_relaxed); }

 private:
  struct Table {
    std::vector<const Entry*> slots;  // open addressing; null = empty
    size_t mask = 0;
  };
  void publish();
  // After publish(): unpublishes `dropped` from the inline cache and frees what no hazard slot
  // holds, of them and of entries retired earlier.
  void retire(std::vector<std::shared_ptr<Entry>> dropped);

  // Keys are a few words: an inline compare beats a call to memcmp.
  static bool same_key(const std::vector<uint64_t>& a, const uint64_t* b, size_t n) {
    if (a.size() != n) return false;
    const uint64_t* w = a.data();
    for (size_t i = 0; i < n; ++i)
      if (w[i] != b[i]) return false;
    return true;
  }

  // Approximate LRU clock: a racy increment is fine, it only orders evictions. A hit on the
  // entry used last changes nothing, so a loop calling one signature writes no shared cache
  // line (which other threads calling the Function would have to re-read).
  void touch(const Entry& e) const {
    const uint64_t tick = clock_.load(std::memory_order_relaxed);
    if (e.last_used.load(std::memory_order_relaxed) + 1 != tick) [[unlikely]] {
      clock_.store(tick + 1, std::memory_order_relaxed);
      e.last_used.store(tick, std::memory_order_relaxed);
    }
  }

  std::vector<std::shared_ptr<Entry>> entries_;
  std::vector<std::shared_ptr<Entry>> retired_;  // dropped, still held by a hazard slot
  struct InlineEntry {
    std::atomic<const Entry*> entry{nullptr};
  };
  mutable InlineEntry inline_[hazard::kSlots];  // indexed by the thread's stripe
  std::atomic<const Table*> table_;
  mutable std::atomic<uint64_t> epoch_{0};
  mutable std::atomic<int64_t> readers_[2] = {0, 0};
  mutable std::atomic<uint64_t> clock_{1};
};

}  // namespace ag::detail
