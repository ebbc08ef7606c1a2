// The disk-cache key of a concrete function: a 128-bit hash of its optimized graph in canonical
// form (ops, types, attributes, constant bytes, sub-graphs; not source lines or variable
// identities), the target (triple, CPU, features, LLVM version) with the compile's settings
// (JitConfig::key), the agc version and a hash of the JIT's own sources, the op table and the
// ABI headers (jit/CMakeLists.txt), so a changed lowering never loads stale code. No LLVM.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ag/graph/graph.h"

namespace ag::jit {

struct CacheKey {
  uint64_t lo = 0, hi = 0;
  std::string hex() const;
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

CacheKey cache_key(const Graph& g, std::string_view target_id);

// The names of the files hashed into every key, space-separated (" ops.def graph.h ... ").
std::string_view hashed_source_files();

// A 64-bit hash of bytes (entry checksums).
uint64_t hash_bytes(std::string_view bytes, uint64_t seed);

}  // namespace ag::jit
