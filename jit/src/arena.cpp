// First-fit interval packing for the static arena of a scope.
#include "arena.h"

#include <algorithm>

namespace ag::jit {

void ArenaLayout::add(int64_t bytes, int32_t first, int32_t last, int64_t* offset) {
  requests_.push_back({(std::max<int64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign, first, last, offset});
}

int64_t ArenaLayout::solve() {
  // In order of definition; ties keep the order of the requests (deterministic layouts).
  std::vector<size_t> order(requests_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests_[a].first != requests_[b].first ? requests_[a].first < requests_[b].first : a < b;
  });
  std::vector<const Request*> placed;
  int64_t size = 0;
  for (size_t index : order) {
    Request& r = requests_[index];
    // Blocks of values alive at the same time as r, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Request* p : placed)
      if (p->first <= r.last && r.first <= p->last) busy.emplace_back(*p->offset, *p->offset + p->bytes);
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [lo, hi] : busy) {
      if (at + r.bytes <= lo) break;
      at = std::max(at, hi);
    }
    *r.offset = at;
    size = std::max(size, at + r.bytes);
    placed.push_back(&r);
  }
  return size;
}

}  // namespace ag::jit
