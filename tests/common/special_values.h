// Special values through every transcendental, for float32 and float64: ±0, ±inf, NaN,
// denormals, the extremes, and the inputs around each function's overflow and underflow
// thresholds, checked against a long double reference. Shared by the eager tests (run under
// every kernel ISA level, AG_KERNEL_ISA) and the JIT tests (run under every AG_JIT_CPU level).
//
// Each value fills a whole run of kRepeat elements, so that it goes through the vector loop
// of every SIMD width (and never only through a scalar remainder loop).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ag/ag.h"

namespace agtest::special {

inline constexpr int kRepeat = 64;

struct Case {
  const char* name;
  // The op on tensors (y is used by pow only).
  std::function<ag::Tensor(const ag::Tensor& x, const ag::Tensor& y)> op;
  std::function<long double(long double x, long double y)> ref;
  bool binary;
  // Max error in ULPs of a finite, nonzero result (see docs/eager.md, docs/jit.md).
  double max_ulps;
};

inline std::vector<Case> cases() {
  auto sigmoid_ref = [](long double x, long double) -> long double {
    if (std::isnan(x)) return x;
    return 1.0L / (1.0L + std::exp(-x));
  };
  auto softplus_ref = [](long double x, long double) -> long double {
    if (std::isnan(x)) return x;
    return std::max(x, 0.0L) + std::log1p(std::exp(-std::fabs(x)));
  };
  return {
      {"exp", [](const ag::Tensor& x, const ag::Tensor&) { return ag::exp(x); },
       [](long double x, long double) { return std::exp(x); }, false, 4},
      {"log", [](const ag::Tensor& x, const ag::Tensor&) { return ag::log(x); },
       [](long double x, long double) { return std::log(x); }, false, 4},
      {"sqrt", [](const ag::Tensor& x, const ag::Tensor&) { return ag::sqrt(x); },
       [](long double x, long double) { return std::sqrt(x); }, false, 1},
      {"tanh", [](const ag::Tensor& x, const ag::Tensor&) { return ag::tanh(x); },
       [](long double x, long double) { return std::tanh(x); }, false, 5},
      {"sigmoid", [](const ag::Tensor& x, const ag::Tensor&) { return ag::sigmoid(x); }, sigmoid_ref, false, 6},
      {"softplus", [](const ag::Tensor& x, const ag::Tensor&) { return ag::softplus(x); }, softplus_ref, false, 4},
      {"sin", [](const ag::Tensor& x, const ag::Tensor&) { return ag::sin(x); },
       [](long double x, long double) { return std::sin(x); }, false, 4},
      {"cos", [](const ag::Tensor& x, const ag::Tensor&) { return ag::cos(x); },
       [](long double x, long double) { return std::cos(x); }, false, 4},
      {"pow", [](const ag::Tensor& x, const ag::Tensor& y) { return ag::pow(x, y); },
       [](long double x, long double y) { return std::pow(x, y); }, true, 4},
      {"erf", [](const ag::Tensor& x, const ag::Tensor&) { return ag::erf(x); },
       [](long double x, long double) { return std::erf(x); }, false, 4},
      {"erfc", [](const ag::Tensor& x, const ag::Tensor&) { return ag::erfc(x); },
       [](long double x, long double) { return std::erfc(x); }, false, 4},
      {"log1p", [](const ag::Tensor& x, const ag::Tensor&) { return ag::log1p(x); },
       [](long double x, long double) { return std::log1p(x); }, false, 4},
      {"expm1", [](const ag::Tensor& x, const ag::Tensor&) { return ag::expm1(x); },
       [](long double x, long double) { return std::expm1(x); }, false, 4},
      {"rsqrt", [](const ag::Tensor& x, const ag::Tensor&) { return ag::rsqrt(x); },
       [](long double x, long double) { return 1.0L / std::sqrt(x); }, false, 1},
      {"tan", [](const ag::Tensor& x, const ag::Tensor&) { return ag::tan(x); },
       [](long double x, long double) { return std::tan(x); }, false, 4},
      {"atan", [](const ag::Tensor& x, const ag::Tensor&) { return ag::atan(x); },
       [](long double x, long double) { return std::atan(x); }, false, 4},
      {"asin", [](const ag::Tensor& x, const ag::Tensor&) { return ag::asin(x); },
       [](long double x, long double) { return std::asin(x); }, false, 4},
      {"acos", [](const ag::Tensor& x, const ag::Tensor&) { return ag::acos(x); },
       [](long double x, long double) { return std::acos(x); }, false, 4},
      {"sinh", [](const ag::Tensor& x, const ag::Tensor&) { return ag::sinh(x); },
       [](long double x, long double) { return std::sinh(x); }, false, 4},
      {"cosh", [](const ag::Tensor& x, const ag::Tensor&) { return ag::cosh(x); },
       [](long double x, long double) { return std::cosh(x); }, false, 4},
      {"asinh", [](const ag::Tensor& x, const ag::Tensor&) { return ag::asinh(x); },
       [](long double x, long double) { return std::asinh(x); }, false, 4},
      {"acosh", [](const ag::Tensor& x, const ag::Tensor&) { return ag::acosh(x); },
       [](long double x, long double) { return std::acosh(x); }, false, 4},
      {"atanh", [](const ag::Tensor& x, const ag::Tensor&) { return ag::atanh(x); },
       [](long double x, long double) { return std::atanh(x); }, false, 4},
      {"atan2", [](const ag::Tensor& x, const ag::Tensor& y) { return ag::atan2(x, y); },
       [](long double x, long double y) { return std::atan2(x, y); }, true, 4},
  };
}

// The inputs of a unary function in T.
template <class T>
std::vector<T> unary_inputs(const std::string& fn) {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0),           -T(0),         L::infinity(),  -L::infinity(), L::quiet_NaN(),
                      L::denorm_min(), -L::denorm_min(), L::min() / 4, -L::min() / 4,  L::min(),
                      -L::min(),       L::max(),       -L::max(),      T(1),           T(-1),
                      T(0.5),          T(-0.5),        T(2),           T(-3),          T(10),
                      T(-10),          T(100),         T(-100),        T(1e6),         T(-1e6)};
  const bool f32 = sizeof(T) == 4;
  if (fn == "exp" || fn == "sigmoid" || fn == "softplus") {
    // Around overflow (exp(x) > max), the last normal result, the denormal range and underflow to 0.
    for (double x : f32 ? std::vector<double>{88.7, 88.72, 88.73, 89, -87.3, -88.72, -88.8, -95, -103.9, -104.5, -110}
                        : std::vector<double>{709.7, 709.78, 709.79, 710, -708.3, -709.78, -709.8, -720, -745.1,
                                              -745.2, -800})
      v.push_back(static_cast<T>(x));
  }
  if (fn == "tanh") {
    for (double x : {1e-4, -1e-4, 0.0004, 9.0, -9.0, 20.0, -20.0, 1e-30}) v.push_back(static_cast<T>(x));
  }
  if (fn == "sin" || fn == "cos") {
    for (double x : {3.14159265358979, -3.14159265358979, 1.5707963267949, 1e4, -1e4, 12345.678}) v.push_back(static_cast<T>(x));
  }
  if (fn == "sinh" || fn == "cosh" || fn == "expm1") {  // around overflow, and tiny arguments
    for (double x : f32 ? std::vector<double>{88.7, 89.4, 89.5, -88.7, -89.5, 1e-30, -1e-30, 0.3, -0.3}
                        : std::vector<double>{709.7, 710.4, 710.5, -709.7, -710.5, 1e-300, -1e-300, 0.3, -0.3})
      v.push_back(static_cast<T>(x));
  }
  if (fn == "asin" || fn == "acos" || fn == "atanh" || fn == "log1p" || fn == "acosh" || fn == "erfc") {
    // The edges of the domains: atanh(±1) = ±inf, log1p(-1) = -inf, acosh(1) = 0, |x| > 1 NaN;
    // erfc's tail into the denormals.
    for (double x : {0.999999, -0.999999, 1.000001, -1.000001, 0.3, -0.3, 1.5, 5.0, 9.0, 12.0, 27.0, -6.0})
      v.push_back(static_cast<T>(x));
  }
  if (fn == "tan" || fn == "atan") {
    for (double x : {3.14159265358979, 1.5707963267949, -1.5707963267949, 0.785398163397448, 1e4, 1e30})
      v.push_back(static_cast<T>(x));
  }
  if (fn == "log" || fn == "sqrt" || fn == "rsqrt") {
    for (double x : {1e-30, 1e30, 0.999999, 1.000001}) v.push_back(static_cast<T>(x));
  }
  return v;
}

// Every (x, y) pair of the binary functions' special inputs (IEEE 754 pow: pow(x, ±0) = 1,
// pow(1, y) = 1, pow(-1, ±inf) = 1, pow(±0, negative) = ±inf, a negative base with a
// non-integer exponent is NaN, ...; atan2: the signed zeros and infinities of each quadrant).
template <class T>
void pow_inputs(std::vector<T>& xs, std::vector<T>& ys) {
  using L = std::numeric_limits<T>;
  const std::vector<T> v = {T(0),   -T(0),   L::infinity(), -L::infinity(), L::quiet_NaN(), T(1),
                            T(-1),  T(2),    T(-2),         T(0.5),         T(-0.5),        T(3),
                            T(-3),  T(1e-3), L::denorm_min(), L::max(),    T(10)};
  for (T x : v)
    for (T y : v) {
      xs.push_back(x);
      ys.push_back(y);
    }
}

inline std::string repr(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9Lg", v);
  return buf;
}

// ULPs between got and the reference rounded to T (denormal results: in units of denorm_min).
template <class T>
double ulps(T got, T want) {
  if (got == want) return 0;
  const T spacing = std::max(std::abs(std::nextafter(want, std::numeric_limits<T>::infinity()) - want),
                             std::numeric_limits<T>::denorm_min());
  return static_cast<double>(std::abs(static_cast<long double>(got) - static_cast<long double>(want)) / spacing);
}

// Checks one result element against the reference; returns an empty string when it passes.
template <class T>
std::string check(const Case& c, T x, T y, T got) {
  const long double r = c.ref(x, y);
  const T want = static_cast<T>(r);
  const std::string where = std::string(c.name) + "(" + repr(x) + (c.binary ? ", " + repr(y) : "") + ") = " +
                            repr(got) + ", expected " + repr(want);
  if (std::isnan(want)) return std::isnan(got) ? "" : where + " (NaN)";
  if (std::isinf(want)) return got == want ? "" : where + " (exactly)";
  if (want == 0) {
    // A zero result is exact, with the reference's sign (sqrt(-0) = -0, sin(-0) = -0, ...).
    return got == 0 && std::signbit(got) == std::signbit(want) ? "" : where + " (exactly, with its sign)";
  }
  const double e = std::isfinite(got) ? ulps<T>(got, want) : 1e300;
  return e <= c.max_ulps ? "" : where + " (" + repr(e) + " ulp, bound " + repr(c.max_ulps) + ")";
}

// Runs every case through `run` (op, x, y -> result: eager, or a compiled Function) and
// checks each element. `run` gets tensors of kRepeat copies of each input.
template <class T>
void check_all(const std::function<ag::Tensor(const Case&, const ag::Tensor&, const ag::Tensor&)>& run) {
  for (const Case& c : cases()) {
    std::vector<T> xs, ys;
    if (c.binary) {
      pow_inputs<T>(xs, ys);
    } else {
      xs = unary_inputs<T>(c.name);
      ys.assign(xs.size(), T(1));
    }
    std::vector<T> x_rep, y_rep;
    for (size_t i = 0; i < xs.size(); ++i)
      for (int k = 0; k < kRepeat; ++k) {
        x_rep.push_back(xs[i]);
        y_rep.push_back(ys[i]);
      }
    const int64_t n = static_cast<int64_t>(x_rep.size());
    const std::vector<T> got = run(c, ag::constant(x_rep, {n}), ag::constant(y_rep, {n})).template to_vector<T>();
    ASSERT_EQ(got.size(), x_rep.size()) << c.name;
    int failures = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string err = check<T>(c, x_rep[i], y_rep[i], got[i]);
      if (!err.empty() && failures++ < 16) ADD_FAILURE() << err << " [" << (sizeof(T) == 4 ? "float32" : "float64") << "]";
      if (!err.empty()) i = (i / kRepeat + 1) * kRepeat - 1;  // one report per input value
    }
  }
}

}  // namespace agtest::special
