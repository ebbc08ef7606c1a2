// The two 16-bit floating-point element types, as storage: ag::Float16 (IEEE binary16, dtype
// ag::float16) and ag::BFloat16 (bfloat16, dtype ag::bfloat16). Arithmetic on them computes in
// float32 (every op widens its 16-bit inputs and rounds its result back), so these types only
// convert: from float with round-to-nearest-even (overflow to infinity, NaN stays NaN), to float
// exactly. The JIT emits the same bit manipulations (jit/src/lower/lower_half.cpp), so eager and
// compiled code round identically at every ISA level.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace ag {

namespace detail {

constexpr uint16_t float_to_half_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return sign | 0x7E00u;   // NaN: a quiet NaN
  if (ax >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 (halfway past 65504): infinity
  if (ax < 0x33000000u) return sign;             // <= 2^-25: zero (2^-25 itself ties to even 0)
  if (ax < 0x38800000u) {                        // below 2^-14: a subnormal in units of 2^-24
    const uint32_t shift = 126 - (ax >> 23);     // 14..24
    const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  const uint32_t r = ax - 0x38000000u;  // rebias the exponent from 127 to 15
  uint32_t q = r >> 13;
  const uint32_t rem = r & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | q);
}

constexpr float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (m << 13));
  if (e == 0) {
    const float v = static_cast<float>(m) * 0x1p-24f;  // exact: m < 2^10
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

constexpr uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);  // nearest, ties to even
}

constexpr float bfloat16_bits_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

}  // namespace detail

struct Float16 {
  uint16_t bits = 0;
  constexpr Float16() = default;
  constexpr explicit Float16(float f) : bits(detail::float_to_half_bits(f)) {}
  static constexpr Float16 from_bits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  constexpr explicit operator float() const { return detail::half_bits_to_float(bits); }
  friend constexpr bool operator==(Float16 a, Float16 b) { return float(a) == float(b); }
};

struct BFloat16 {
  uint16_t bits = 0;
  constexpr BFloat16() = default;
  constexpr explicit BFloat16(float f) : bits(detail::float_to_bfloat16_bits(f)) {}
  static constexpr BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  constexpr explicit operator float() const { return detail::bfloat16_bits_to_float(bits); }
  friend constexpr bool operator==(BFloat16 a, BFloat16 b) { return float(a) == float(b); }
};

template <class T>
inline constexpr bool is_half_float_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

}  // namespace ag
