// The counter-based random stream's fill loops, built per instruction-set level like the other
// SIMD-bound kernels: the 64-bit multiplies of the mixer and the u64 -> double conversions
// vectorize only where the level has them (AVX-512's vpmullq, vcvtuqq2pd), so a baseline build
// of these loops was several times slower. Word `c` of the stream of `seed` is a pure function
// of (seed, c), and every level computes it bit for bit alike: integer arithmetic, exact
// conversions, and no contraction into FMAs (this file is compiled with -ffp-contract=off, see
// runtime/CMakeLists.txt), so one seed gives one sequence on every CPU.
#include <cmath>

#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
// Word `c` of the stream whose mixed seed is `key`, as a double in [0, 1).
double uniform01(uint64_t key, uint64_t c) { return static_cast<double>(mix(key ^ c) >> 11) * 0x1.0p-53; }

// One word per element.
void fill_uniform(DType dtype, void* out, int64_t n, uint64_t seed, uint64_t counter, double minval, double maxval) {
  const uint64_t key = mix(seed);
  visit_compute_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out);
    // u < 1, but minval + u * (maxval - minval) can still round up to maxval: such values become
    // the largest value below maxval, so the interval stays half-open.
    if constexpr (std::is_floating_point_v<T>) {
      const T hi = static_cast<T>(maxval), lo = static_cast<T>(minval);
      const T below = std::nextafter(hi, lo);
      for (int64_t k = 0; k < n; ++k) {
        const T v = static_cast<T>(minval + uniform01(key, counter + static_cast<uint64_t>(k)) * (maxval - minval));
        p[k] = v >= hi && hi > lo && below >= lo ? below : v;  // (minval > maxval: left as computed)
      }
    } else {
      const double top = std::ceil(maxval) - 1;  // the largest integer below maxval
      for (int64_t k = 0; k < n; ++k) {
        const double x = minval + uniform01(key, counter + static_cast<uint64_t>(k)) * (maxval - minval);
        p[k] = convert_value<T>(std::min(std::floor(x), top));
      }
    }
  });
}

// Two words per element (Box-Muller).
void fill_normal(DType dtype, void* out, int64_t n, uint64_t seed, uint64_t counter, double mean, double stddev) {
  const uint64_t key = mix(seed);
  visit_compute_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out);
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t c = counter + 2 * static_cast<uint64_t>(k);
      const double u1 = 1.0 - uniform01(key, c);
      const double u2 = uniform01(key, c + 1);
      p[k] = static_cast<T>(mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
  });
}

}  // namespace

void random_fill(DType dtype, void* out, int64_t n, bool normal, uint64_t seed, uint64_t counter, double a, double b) {
  if (normal) fill_normal(dtype, out, n, seed, counter, a, b);
  else fill_uniform(dtype, out, n, seed, counter, a, b);
}

}  // namespace ag::detail::AG_KERNEL_NS
