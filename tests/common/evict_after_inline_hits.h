// Evicts a Function's cache `rounds` times, each time only once the inline cache has served a
// call since the previous eviction (waiting up to 2 s per round). However loaded the machine
// (a JIT compile can outlast any fixed interval), calls on the inline path and evictions then
// interleave. Returns how many rounds saw inline hits.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace agtest {

template <class Function>
int evict_after_inline_hits(Function& f, int rounds) {
  int rounds_with_hits = 0;
  for (int i = 0; i < rounds; ++i) {
    const int64_t seen = f.stats().inline_hits;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (f.stats().inline_hits == seen && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    rounds_with_hits += f.stats().inline_hits > seen;
    f.evict();
  }
  return rounds_with_hits;
}

}  // namespace agtest
