// Deterministic test tensors with the values that break kernels: NaN, infinities, signed zeros,
// halves (rounding), integer extremes, -1 divisors.
#pragma once

#include <ag/ag.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace agtest {

enum class Values {
  Any,        // everything, including NaN/inf and integer extremes
  Moderate,   // finite, |x| < 10 (transcendentals compared within a relative tolerance)
  Positive,   // > 0
  NonZero,    // integer divisors: no zeros, -1 included
  SmallExp,   // integer exponents 0..6
};

inline ag::Tensor sample(ag::DType dtype, const ag::Shape& shape, uint64_t seed, Values kind = Values::Any) {
  std::mt19937_64 rng(seed * 7919 + 17);
  const int64_t n = shape.num_elements();
  std::vector<double> f(static_cast<size_t>(n));
  std::vector<int64_t> iv(static_cast<size_t>(n));
  std::uniform_real_distribution<double> uni(-1, 1);
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {std::nan(""), inf, -inf, -0.0, 0.5, 1.5, 2.5, -2.5, 0.0, 1e30};
  const bool is64 = dtype == ag::DType::Int64;
  const int64_t imin = is64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  const int64_t imax = is64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
  const int64_t ispecials[] = {imin, imax, -1, 0, 1, imin + 1};
  for (int64_t i = 0; i < n; ++i) {
    const double u = uni(rng);
    const bool special = i % 7 == 3;
    switch (kind) {
      case Values::Any:
        f[i] = special ? specials[(i / 7) % 10] : u * 8;
        iv[i] = special ? ispecials[(i / 7) % 6] : static_cast<int64_t>(u * 50);
        break;
      case Values::Moderate:
        f[i] = special ? specials[3 + (i / 7) % 6] : u * 6;
        iv[i] = static_cast<int64_t>(u * 50);
        break;
      case Values::Positive:
        f[i] = std::abs(u) * 10 + 1e-3;
        iv[i] = static_cast<int64_t>(std::abs(u) * 50) + 1;
        break;
      case Values::NonZero:
        f[i] = u * 8 + (u >= 0 ? 0.25 : -0.25);
        iv[i] = special ? -1 : static_cast<int64_t>(u * 20) + (u >= 0 ? 1 : -1);
        break;
      case Values::SmallExp:
        f[i] = std::abs(u) * 3;
        iv[i] = static_cast<int64_t>(std::abs(u) * 6.99);
        break;
    }
  }
  if (dtype == ag::DType::Bool)
    for (int64_t i = 0; i < n; ++i) iv[i] = f[i] > 0 ? 1 : 0;
  return ag::detail::constant_from(dtype, shape, ag::is_floating(dtype) ? f.data() : nullptr,
                                   ag::is_floating(dtype) ? nullptr : iv.data());
}

inline const std::vector<ag::DType>& numeric_dtypes() {
  static const std::vector<ag::DType> d = {ag::int32, ag::int64, ag::float32, ag::float64};
  return d;
}
inline const std::vector<ag::DType>& float_dtypes() {
  static const std::vector<ag::DType> d = {ag::float32, ag::float64};
  return d;
}

inline const std::vector<ag::Shape>& unary_shapes() {
  static const std::vector<ag::Shape> s = {{}, {0}, {1}, {7}, {3, 5}, {2, 3, 4}, {1, 9, 1}};
  return s;
}

// Pairs of broadcast-compatible shapes (scalars, empties, size-1 dims, rank differences).
inline const std::vector<std::pair<ag::Shape, ag::Shape>>& binary_shapes() {
  static const std::vector<std::pair<ag::Shape, ag::Shape>> s = {
      {{}, {}},       {{5}, {5}},          {{}, {4}},         {{3, 4}, {}},        {{3, 4}, {4}},
      {{3, 1}, {1, 4}}, {{2, 3, 4}, {3, 1}}, {{0}, {1}},        {{0, 3}, {3}},       {{4, 1, 3}, {5, 1}},
      {{1}, {6}},     {{2, 1, 1}, {1, 3, 2}}, {{33}, {33}},
  };
  return s;
}

}  // namespace agtest
