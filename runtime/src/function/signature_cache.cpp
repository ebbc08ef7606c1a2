// SignatureCache: epoch-pinned lock-free reads, copy-on-write tables.
#include "signature_cache.h"

#include <algorithm>
#include <thread>
#include <utility>

namespace ag::detail {
namespace {

// Keys are a few words: an inline compare beats a call to memcmp.
bool same_key(const std::vector<uint64_t>& a, const uint64_t* b, size_t n) {
  if (a.size() != n) return false;
  const uint64_t* w = a.data();
  for (size_t i = 0; i < n; ++i)
    if (w[i] != b[i]) return false;
  return true;
}

}  // namespace

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
        // Approximate LRU clock: a racy increment is fine, it only orders evictions. A hit on
        // the entry used last changes nothing, so a loop calling one signature writes no
        // shared cache line (which other threads calling the Function would have to re-read).
        const uint64_t tick = clock_.load(std::memory_order_relaxed);
        if (entry->last_used.load(std::memory_order_relaxed) + 1 != tick) {
          clock_.store(tick + 1, std::memory_order_relaxed);
          entry->last_used.store(tick, std::memory_order_relaxed);
        }
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
