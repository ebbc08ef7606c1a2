// Static buffer planning: values with a known size and a live interval [def, last use] (in node
// order) get offsets in one arena, reusing the space of values that are dead.
#pragma once

#include <cstdint>
#include <vector>

namespace ag::jit {

class ArenaLayout {
 public:
  static constexpr int64_t kAlign = 64;
  // Requests `bytes` live from node `first` to node `last` (inclusive); `*offset` gets its place.
  void add(int64_t bytes, int32_t first, int32_t last, int64_t* offset);
  // Places every request (first fit, in order of definition) and returns the arena's size.
  int64_t solve();

 private:
  struct Request {
    int64_t bytes;
    int32_t first, last;
    int64_t* offset;
  };
  std::vector<Request> requests_;
};

}  // namespace ag::jit
