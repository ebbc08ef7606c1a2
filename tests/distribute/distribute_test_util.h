// Helpers of the multi-process tests: each process's operand, known to every process, so that
// each can compute the single-process reference of a collective itself.
#pragma once

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "../jit/jit_test_util.h"

namespace agtest {

// Process `rank`'s operand: float32[6] values that differ across ranks element by element (so
// max and min pick different processes per element), as `dtype`.
inline ag::Tensor contribution(int rank, ag::DType dtype) {
  std::vector<float> v(6);
  for (int i = 0; i < 6; ++i) v[static_cast<size_t>(i)] = static_cast<float>((i * 7 + rank * 5) % 11 - 5);
  return ag::cast(ag::constant(v), dtype);
}

// Compiles per Function and signature: one with the JIT, none on the interpreter-only build.
#ifdef AG_TEST_WITH_JIT
inline constexpr int kCompiles = 1;
#else
inline constexpr int kCompiles = 0;
#endif

inline int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace agtest
