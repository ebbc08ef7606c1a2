// SignatureCache: epoch-pinned lock-free reads, copy-on-write tables.
#include "signature_cache.h"

#include <algorithm>
#include <thread>
#include <utility>

namespace ag::detail {

SignatureCache::SignatureCache() : table_(new Table{std::vector<const Entry*>(1, nullptr), 0}) {}

SignatureCache::~SignatureCache() { delete table_.load(); }

std::shared_ptr<ConcreteCore> SignatureCache::find(const uint64_t* key, size_t n, uint64_t hash) const {
  for (;;) {
    const uint64_t e = epoch_.load(std::memory_order_seq_cst);
    readers_[e & 1].fetch_add(1, std::memory_order_seq_cst);
    if (epoch_.load(std::memory_order_seq_cst) != e) {  // a writer flipped meanwhile: retry
      readers_[e & 1].fetch_sub(1, std::memory_order_release);
      continue;
    }
    const Table* t = table_.load(std::memory_order_acquire);
    std::shared_ptr<ConcreteCore> found;
    for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
      const Entry* entry = t->slots[i];
      if (!entry) break;
      if (entry->hash == hash && same_key(entry->key, key, n)) {
        touch(*entry);
        // Pinned: a writer that drops this entry unpublishes it only after this reader unpins.
        const uint32_t stripe = StripedCounter::current_stripe();
        if (stripe < hazard::kSlots && inline_[stripe].entry.load(std::memory_order_relaxed) != entry)
          inline_[stripe].entry.store(entry, std::memory_order_release);
        found = entry->fn;
        break;
      }
    }
    readers_[e & 1].fetch_sub(1, std::memory_order_release);
    return found;
  }
}

void SignatureCache::insert(std::shared_ptr<Entry> e, const Entry* replaced) {
  e->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
  std::shared_ptr<Entry> dropped;  // freed after publish(): readers of the old table may hold it
  if (replaced)
    for (auto& slot : entries_)
      if (slot.get() == replaced) {
        dropped = std::exchange(slot, std::move(e));
        break;
      }
  if (e) entries_.push_back(std::move(e));
  publish();
  if (dropped) retire({std::move(dropped)});
}

void SignatureCache::retire(std::vector<std::shared_ptr<Entry>> dropped) {
  for (auto& d : dropped) {
    for (InlineEntry& slot : inline_) {
      const Entry* expected = d.get();
      slot.entry.compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst);
    }
    retired_.push_back(std::move(d));
  }
  if (retired_.empty()) return;
  hazard::writer_fence();  // every caller's hazard store before now is visible to the scan
  std::erase_if(retired_, [](const std::shared_ptr<Entry>& e) { return !hazard::held_by_any_thread(e.get()); });
}

void SignatureCache::publish() {
  size_t cap = 2;
  while (cap < entries_.size() * 2 + 1) cap <<= 1;
  auto* t = new Table;
  t->slots.assign(cap, nullptr);
  t->mask = cap - 1;
  for (const auto& e : entries_)
    for (size_t i = e->hash & t->mask;; i = (i + 1) & t->mask)
      if (!t->slots[i]) {
        t->slots[i] = e.get();
        break;
      }
  const Table* old = table_.exchange(t, std::memory_order_seq_cst);
  // Grace period: readers that may hold `old` are counted under the current epoch parity.
  const uint64_t e = epoch_.fetch_add(1, std::memory_order_seq_cst);
  while (readers_[e & 1].load(std::memory_order_acquire) != 0) std::this_thread::yield();
  delete old;
}

}  // namespace ag::detail
