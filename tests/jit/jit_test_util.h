// Helpers for the JIT tests: compare tensors (bit-exact integers, documented float tolerance) and
// run one C++ function eagerly, through the graph interpreter and through the JIT.
#pragma once

#include <ag/ag.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

namespace agtest {

// Float tolerance: |jit - eager| <= atol + rtol * |eager|, NaN matches NaN. The JIT and Eigen use
// different (both few-ULP) implementations of exp/log/tanh/sigmoid/sin/cos and may sum in another
// order, so floats are compared within this tolerance; integers and bools must match exactly.
struct Tol {
  double rtol = 2e-5;
  double atol = 1e-6;
};

inline ::testing::AssertionResult same_tensor(const ag::Tensor& expected, const ag::Tensor& actual, Tol tol = {}) {
  if (!expected.has_value() || !actual.has_value()) return ::testing::AssertionFailure() << "a tensor has no value";
  if (expected.dtype() != actual.dtype())
    return ::testing::AssertionFailure() << "dtype " << ag::dtype_name(actual.dtype()) << " vs " << ag::dtype_name(expected.dtype());
  if (!(expected.shape() == actual.shape()))
    return ::testing::AssertionFailure() << "shape " << actual.shape().str() << " vs " << expected.shape().str();
  const int64_t n = expected.num_elements();
  if (ag::is_floating(expected.dtype())) {
    const auto e = expected.to_vector<double>(), a = actual.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const double x = e[i], y = a[i];
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y) continue;
      if (std::isinf(x) || std::isinf(y) || std::isnan(x) || std::isnan(y) || std::abs(x - y) > tol.atol + tol.rtol * std::abs(x))
        return ::testing::AssertionFailure() << "element " << i << ": " << y << " vs expected " << x << " (in "
                                             << actual.str() << " vs " << expected.str() << ")";
    }
  } else {
    const auto e = expected.to_vector<int64_t>(), a = actual.to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      if (e[i] != a[i])
        return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs expected " << e[i] << " (in "
                                             << actual.str() << " vs " << expected.str() << ")";
  }
  return ::testing::AssertionSuccess();
}

template <class R>
void expect_same(const R& expected, const R& actual, Tol tol, const std::string& what) {
  if constexpr (std::is_same_v<R, ag::Tensor>) {
    EXPECT_TRUE(same_tensor(expected, actual, tol)) << what;
  } else {
    auto one = [&](const ag::Tensor& e, const ag::Tensor& a, size_t i) {
      EXPECT_TRUE(same_tensor(e, a, tol)) << what << " (output " << i << ")";
    };
    [&]<size_t... I>(std::index_sequence<I...>) {
      (one(std::get<I>(expected), std::get<I>(actual), I), ...);
    }(std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

// eager == interpreter == JIT for one call of `fn`; returns the JIT Function's stats.
template <class F, class... Args>
ag::FunctionStats expect_three_way(const std::string& what, F fn, Tol tol, const Args&... args) {
  const auto eager = fn(args...);
  auto interp = ag::function(fn, {.jit_compile = false});
  auto jit = ag::function(fn);
  const auto via_interp = interp(args...);
  const auto via_jit = jit(args...);
  expect_same(eager, via_interp, tol, what + " [interpreter]");
  expect_same(eager, via_jit, tol, what + " [jit]");
  return jit.stats();
}

}  // namespace agtest
