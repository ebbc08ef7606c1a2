// Element types of tensors and their C++ counterparts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "ag/half.h"

namespace ag {

enum class DType : uint8_t {
  Bool,
  Int32,
  Int64,
  Float32,
  Float64,
  List,  // internal: the handle of a TensorArray carried through staged loops
  // Storage dtypes: every op that computes widens them (8-bit integers to int32, 16-bit floats
  // to float32) and rounds or wraps its result back; data movement and casts run on them as is.
  UInt8,
  Int8,
  Float16,
  BFloat16,
};

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType int64 = DType::Int64;
inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;
inline constexpr DType uint8 = DType::UInt8;
inline constexpr DType int8 = DType::Int8;
inline constexpr DType float16 = DType::Float16;
inline constexpr DType bfloat16 = DType::BFloat16;

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::List: return "tensor_array";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
  }
  return "?";
}

// Short form used in graph text: i32[2,?].
constexpr std::string_view dtype_short_name(DType d) {
  switch (d) {
    case DType::Bool: return "i1";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
    case DType::List: return "list";
    case DType::UInt8: return "u8";
    case DType::Int8: return "i8";
    case DType::Float16: return "f16";
    case DType::BFloat16: return "bf16";
  }
  return "?";
}

constexpr size_t dtype_size(DType d) {
  switch (d) {
    case DType::Bool: return 1;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::List: return sizeof(void*);
    case DType::UInt8:
    case DType::Int8: return 1;
    case DType::Float16:
    case DType::BFloat16: return 2;
  }
  return 0;
}

constexpr bool is_floating(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16;
}
constexpr bool is_integer(DType d) {
  return d == DType::Int32 || d == DType::Int64 || d == DType::UInt8 || d == DType::Int8;
}
constexpr bool is_numeric(DType d) { return is_floating(d) || is_integer(d); }
constexpr bool is_unsigned(DType d) { return d == DType::UInt8; }
// A dtype that is only stored: ops compute it in compute_dtype(d) (docs/eager.md, "Dtype rules").
constexpr bool is_storage_dtype(DType d) {
  return d == DType::UInt8 || d == DType::Int8 || d == DType::Float16 || d == DType::BFloat16;
}
constexpr DType compute_dtype(DType d) {
  switch (d) {
    case DType::UInt8:
    case DType::Int8: return DType::Int32;
    case DType::Float16:
    case DType::BFloat16: return DType::Float32;
    default: return d;
  }
}

// C++ type -> DType, following docs/eager.md, "Dtype rules".
template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<U, float>) return DType::Float32;
  else if constexpr (std::is_floating_point_v<U>) return DType::Float64;
  else if constexpr (std::is_integral_v<U> && sizeof(U) <= 4 && (std::is_signed_v<U> || sizeof(U) < 4))
    return DType::Int32;
  else if constexpr (std::is_integral_v<U>) return DType::Int64;
  else static_assert(sizeof(U) == 0, "no ag::DType for this C++ type");
}

// The dtype whose elements a T is, for reading and writing tensor data (data<T>(), constants from
// vectors): exact, unlike dtype_of, which follows C++ promotion for scalars.
template <class T>
constexpr DType element_dtype_of() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<U, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<U, Float16>) return DType::Float16;
  else if constexpr (std::is_same_v<U, BFloat16>) return DType::BFloat16;
  else return dtype_of<U>();
}

template <DType D> struct ctype;
template <> struct ctype<DType::Bool> { using type = bool; };
template <> struct ctype<DType::Int32> { using type = int32_t; };
template <> struct ctype<DType::Int64> { using type = int64_t; };
template <> struct ctype<DType::Float32> { using type = float; };
template <> struct ctype<DType::Float64> { using type = double; };
template <> struct ctype<DType::UInt8> { using type = uint8_t; };
template <> struct ctype<DType::Int8> { using type = int8_t; };
template <> struct ctype<DType::Float16> { using type = Float16; };
template <> struct ctype<DType::BFloat16> { using type = BFloat16; };
template <DType D> using ctype_t = typename ctype<D>::type;

namespace detail {
// One element converted the way ag::cast converts (and the JIT's llvm.fpto*i.sat): floating ->
// integer saturates and NaN becomes 0, anything -> bool is `!= 0`, integer -> integer wraps.
// Never undefined behaviour, whatever the value.
template <class To, class From>
constexpr To convert_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_float_v<From>) {  // through float, exact
    return convert_value<To>(static_cast<float>(v));
  } else if constexpr (is_half_float_v<To>) {  // to float first (as Eigen's half does), then rounded
    return To(convert_value<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (v != v) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}
}  // namespace detail

// Calls f(T{}) with T the C++ element type of a dtype (bool, a number, or a storage dtype's
// uint8_t, int8_t, Float16, BFloat16). For code that stores or converts elements.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(bool{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float32: return f(float{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Float16: return f(Float16{});
    case DType::BFloat16: return f(BFloat16{});
    case DType::Float64: break;
    case DType::List: break;
  }
  return f(double{});
}

}  // namespace ag
