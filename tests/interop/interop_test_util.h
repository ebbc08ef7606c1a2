// Helpers for the interop tests: release counters, misaligned buffers, and one function run
// eagerly, on the graph interpreter and as JIT code.
#pragma once

#include <ag/ag.h>
#include <ag/external.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../runtime/test_util.h"

namespace agtest {

// Counts the calls of a release hook; a test checks it was called exactly once, and when.
struct ReleaseCounter {
  std::atomic<int> calls{0};
  static void hook(void* self) { static_cast<ReleaseCounter*>(self)->calls.fetch_add(1); }
};

// `n` elements of T starting `offset_bytes` past a 64-byte boundary (a multiple of sizeof(T)):
// aligned to the element, and to nothing wider when offset_bytes is sizeof(T).
template <class T>
struct OffsetBuffer {
  OffsetBuffer(size_t n, size_t offset_bytes) : raw(new unsigned char[n * sizeof(T) + 128]) {
    uintptr_t base = (reinterpret_cast<uintptr_t>(raw.get()) + 63) / 64 * 64;
    data = reinterpret_cast<T*>(base + offset_bytes);
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<T>(0);
  }
  std::unique_ptr<unsigned char[]> raw;
  T* data;
};

// How a function runs: eagerly, traced and interpreted, traced and compiled.
enum class Mode { Eager, Interpreter, Jit };

inline std::vector<Mode> modes() {
#ifdef AG_TEST_WITH_JIT
  return {Mode::Eager, Mode::Interpreter, Mode::Jit};
#else
  return {Mode::Eager, Mode::Interpreter};
#endif
}

inline const char* mode_name(Mode m) {
  return m == Mode::Eager ? "eager" : m == Mode::Interpreter ? "interpreter" : "jit";
}

inline ag::FunctionOptions options_for(Mode m) {
  ag::FunctionOptions o;
  o.jit_compile = m == Mode::Jit;
  return o;
}

// Floats within a few ULPs of a reference computed with <cmath> (the JIT's tanh differs from
// Eigen's by a few ULPs); integers exactly.
template <class T>
::testing::AssertionResult near_all(const std::vector<T>& expected, const ag::Tensor& actual, double rtol = 1e-5) {
  const auto a = actual.to_vector<T>();
  if (a.size() != expected.size())
    return ::testing::AssertionFailure() << a.size() << " elements vs " << expected.size();
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(expected[i]), y = static_cast<double>(a[i]);
    if (std::abs(x - y) > 1e-6 + rtol * std::abs(x))
      return ::testing::AssertionFailure() << "element " << i << ": " << y << " vs expected " << x;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace agtest
