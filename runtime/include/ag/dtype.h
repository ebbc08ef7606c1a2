// Element types of tensors and their C++ counterparts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

namespace ag {

enum class DType : uint8_t {
  Bool,
  Int32,
  Int64,
  Float32,
  Float64,
  List,  // internal: the handle of a TensorArray carried through staged loops
};

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType int64 = DType::Int64;
inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::List: return "tensor_array";
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
  }
  return 0;
}

constexpr bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }
constexpr bool is_integer(DType d) { return d == DType::Int32 || d == DType::Int64; }
constexpr bool is_numeric(DType d) { return is_floating(d) || is_integer(d); }

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

template <DType D> struct ctype;
template <> struct ctype<DType::Bool> { using type = bool; };
template <> struct ctype<DType::Int32> { using type = int32_t; };
template <> struct ctype<DType::Int64> { using type = int64_t; };
template <> struct ctype<DType::Float32> { using type = float; };
template <> struct ctype<DType::Float64> { using type = double; };
template <DType D> using ctype_t = typename ctype<D>::type;

namespace detail {
// One element converted the way ag::cast converts (and the JIT's llvm.fpto*i.sat): floating ->
// integer saturates and NaN becomes 0, anything -> bool is `!= 0`, integer -> integer wraps.
// Never undefined behaviour, whatever the value.
template <class To, class From>
constexpr To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
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

// Calls f(T{}) with T the C++ type of a numeric or bool dtype.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(bool{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float32: return f(float{});
    case DType::Float64: break;
    case DType::List: break;
  }
  return f(double{});
}

}  // namespace ag
