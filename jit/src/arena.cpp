// First-fit interval packing for the static arena of a scope.
#include "arena.h"

#include <algorithm>

namespace ag::jit {

void ArenaLayout::add(int64_t bytes, int32_t first, int32_t last, int64_t* offset) {
  requests_.push_back({(std::max<int64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign, first, last, offset});
}

int64_t ArenaLayout::solve() {
  std::stable_sort(requests_.begin(), requests_.end(), [](const Request& a, const Request& b) { return a.first < b.first; });
  std::vector<const Request*> placed;
  int64_t size = 0;
  for (Request& r : requests_) {
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
