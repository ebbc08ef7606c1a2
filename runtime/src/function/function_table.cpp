// A Function's table of concrete functions: lookups under its mutex, inserts (concrete
// functions and the aliases that map more call keys to them, both bounded), and LRU eviction.
// The cached call's lock-free side is function_core.cpp's (the inline cache) and
// signature_cache.h's (the published table).
#include "function_core.h"

#include <algorithm>
#include <limits>

namespace ag::detail {
namespace {

std::shared_ptr<SignatureCache::Entry> make_entry(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn, bool alias) {
  auto e = std::make_shared<SignatureCache::Entry>();
  e->key = key.to_vector();
  e->hash = key.hash();
  e->fn = std::move(fn);
  e->alias = alias;
  return e;
}

}  // namespace

std::shared_ptr<ConcreteCore> FunctionCore::find_exact(const KeyBuf& key) const {
  std::lock_guard lock(mu_);
  const uint64_t h = key.hash();
  for (const auto& e : cache_.entries())
    if (!e->alias && e->hash == h && e->key.size() == key.size() &&
        std::equal(e->key.begin(), e->key.end(), key.data()))
      return e->fn;
  return nullptr;
}

std::shared_ptr<ConcreteCore> FunctionCore::find_compatible(std::span<const ArgView> args) const {
  std::shared_ptr<ConcreteCore> best;
  int best_score = std::numeric_limits<int>::min();  // an unknown rank scores below 0
  for (const auto& e : cache_.entries()) {
    if (e->alias) continue;
    if (!matches(e->fn->signature(), args)) continue;
    const int score = specificity(e->fn->signature());
    if (score > best_score) best = e->fn, best_score = score;
  }
  return best;
}

void FunctionCore::insert(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn, bool alias) {
  cache_.insert(make_entry(key, std::move(fn), alias));
}

void FunctionCore::insert_alias(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn) {
  // Aliases are bounded like concrete functions: with reduce_retracing, a generalize policy or an
  // unknown-rank input_signature every new call shape adds one, forever otherwise. At the bound
  // the least recently used alias makes room, in the same table update (one rebuild per insert,
  // of a table whose size is bounded).
  const SignatureCache::Entry* lru_alias = nullptr;
  size_t aliases = 0;
  for (const auto& e : cache_.entries())
    if (e->alias) {
      ++aliases;
      if (!lru_alias || e->last_used.load(std::memory_order_relaxed) < lru_alias->last_used.load(std::memory_order_relaxed))
        lru_alias = e.get();
    }
  cache_.insert(make_entry(key, std::move(fn), /*alias=*/true), aliases >= max_aliases() ? lru_alias : nullptr);
}

void FunctionCore::evict_over_capacity() {
  for (;;) {
    size_t concrete = 0, aliases = 0;
    const SignatureCache::Entry* lru = nullptr;
    const SignatureCache::Entry* lru_alias = nullptr;
    for (const auto& e : cache_.entries()) {
      const uint64_t used = e->last_used.load(std::memory_order_relaxed);
      if (e->alias) {
        ++aliases;
        if (!lru_alias || used < lru_alias->last_used.load()) lru_alias = e.get();
      } else {
        ++concrete;
        if (!lru || used < lru->last_used.load()) lru = e.get();
      }
    }
    if (concrete > options_.max_cached) {
      const ConcreteCore* victim = lru->fn.get();
      history_.record({TraceEvent::Kind::Evicted, 0, victim->signature_str(), {}, 0, lru->fn});
      cache_.remove_if([&](const SignatureCache::Entry& e) { return e.fn.get() == victim; });
      stats_->evictions.fetch_add(1);
    } else if (aliases > max_aliases()) {
      cache_.remove_if([&](const SignatureCache::Entry& e) { return &e == lru_alias; });
    } else {
      return;
    }
  }
}

std::vector<std::shared_ptr<ConcreteCore>> FunctionCore::concrete_functions() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<ConcreteCore>> out;
  for (const auto& e : cache_.entries())
    if (!e->alias) out.push_back(e->fn);
  return out;
}

std::vector<std::shared_ptr<ConcreteView>> FunctionCore::concrete_views() const {
  std::vector<std::shared_ptr<ConcreteView>> out;
  for (auto& c : concrete_functions()) out.push_back(std::move(c));
  return out;
}

int64_t FunctionCore::tracing_count() const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& e : cache_.entries()) n += !e->alias;
  return n;
}

void FunctionCore::evict_all() {
  std::lock_guard lock(mu_);
  auto removed = cache_.remove_if([](const SignatureCache::Entry&) { return true; });
  for (const auto& e : removed)
    if (!e->alias) {
      stats_->evictions.fetch_add(1);
      history_.record({TraceEvent::Kind::EvictedAll, 0, e->fn->signature_str(), {}, 0, e->fn});
    }
}

}  // namespace ag::detail
