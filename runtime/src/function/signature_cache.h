// SignatureCache: key -> concrete function, with lock-free lookups.
//
// Readers never block: they pin a table through an epoch counter, look up, copy the entry's
// shared_ptr and unpin. Writers (serialized by the owner's mutex) publish a new immutable
// table, flip the epoch and wait for readers of the old epoch to drain (nanoseconds: readers
// never run user code while pinned) before freeing the old table.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

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

  // Lock-free; null when absent. Marks the entry used.
  std::shared_ptr<ConcreteCore> find(const uint64_t* key, size_t n, uint64_t hash) const;

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
    return removed;
  }
  uint64_t now() const { return clock_.load(std::memory_order_relaxed); }

 private:
  struct Table {
    std::vector<const Entry*> slots;  // open addressing; null = empty
    size_t mask = 0;
  };
  void publish();

  std::vector<std::shared_ptr<Entry>> entries_;
  std::atomic<const Table*> table_;
  mutable std::atomic<uint64_t> epoch_{0};
  mutable std::atomic<int64_t> readers_[2] = {0, 0};
  mutable std::atomic<uint64_t> clock_{1};
};

}  // namespace ag::detail
