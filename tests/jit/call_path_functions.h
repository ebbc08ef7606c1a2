// The small Functions and inputs the cached-call path's tests share (call_stub_test.cpp,
// direct_call_test.cpp): one to three tensors in, one or two results, code that can fail.
#pragma once

#include <tuple>

#include "ag/ag.h"
#include "jit_test_util.h"

namespace callpath {

using ag::Tensor;

inline Tensor affine(Tensor x) { return x * 2 + 1; }
inline Tensor product_minus(Tensor x, Tensor y) { return x * y - y; }
inline Tensor fma3(Tensor x, Tensor y, Tensor z) { return x * y + z; }
inline std::tuple<Tensor, Tensor> plus_and_square(Tensor x) { return {x + 1, x * x}; }
inline std::tuple<Tensor, Tensor> sum_and_difference(Tensor x, Tensor y) { return {x + y, x - y}; }
// Raises InvalidArgumentError for a negative element (through a runtime helper).
inline Tensor checked_double(Tensor x) {
  ag::assert_true(ag::reduce_all(x >= 0), "non-negative");
  return x * 2;
}

// Calls `f` (product_minus) under a tape watching x and y, and checks both gradients.
template <class F>
void expect_product_minus_gradients(F& f, const Tensor& x, const Tensor& y) {
  ag::GradientTape tape;
  tape.watch(x);
  tape.watch(y);
  const Tensor z = ag::reduce_sum(f(x, y));
  const auto grads = tape.gradient(z, {x, y});
  agtest::expect_same(y, grads[0], {}, "dz/dx");
  agtest::expect_same(x - 1.f, grads[1], {}, "dz/dy");
}

// A float scalar, two [3, 4] float matrices and an int32 vector.
struct Inputs {
  Tensor s = ag::constant(3.5f);
  Tensor m = ag::reshape(ag::range(0.f, 12.f, 1.f), {3, 4});
  Tensor n = ag::reshape(ag::range(-6.f, 6.f, 1.f), {3, 4});
  Tensor i = ag::constant({7, -2, 5});
};

}  // namespace callpath
