// ArgView: a uniform, allocation-free view of one argument of a Function call, so that the
// signature cache and tracing are written once, outside the templates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

#include "ag/tensor.h"
#include "ag/tensor_spec.h"

namespace ag {
class Variable;
}

namespace ag::detail {

enum class ArgKind : uint8_t { Tensor, TensorSpec, Variable, Bool, Int, Float, String };

struct ArgView {
  ArgKind kind = ArgKind::Tensor;
  const void* ptr = nullptr;  // the argument object (Tensor, TensorSpec, Variable, or the value)
  int64_t i = 0;
  double f = 0;
  std::string_view s;
  const std::type_info* type = nullptr;  // the C++ type of a plain value (for messages)

  const Tensor& tensor() const { return *static_cast<const Tensor*>(ptr); }
  const TensorSpec& spec() const { return *static_cast<const TensorSpec*>(ptr); }
};

template <class P>
inline constexpr bool is_tensor_param = std::is_same_v<std::remove_cvref_t<P>, Tensor>;
template <class P>
inline constexpr bool is_variable_param = std::is_same_v<std::remove_cvref_t<P>, Variable>;

// How a Function's call operator takes a parameter: a Tensor declared by value or by const
// reference is taken by const reference (copying it would be two atomic operations per call,
// and the traced function never sees the caller's object anyway); anything else as declared.
template <class P>
using call_param_t = std::conditional_t<is_tensor_param<P> && (!std::is_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>),
                                        const Tensor&, P>;

template <class P>
ArgView view_of(const std::remove_cvref_t<P>& a) {
  using T = std::remove_cvref_t<P>;
  ArgView v;
  v.ptr = &a;
  if constexpr (is_tensor_param<P>) {
    v.kind = ArgKind::Tensor;
  } else if constexpr (is_variable_param<P>) {
    v.kind = ArgKind::Variable;
  } else if constexpr (std::is_same_v<T, bool>) {
    v.kind = ArgKind::Bool, v.i = a, v.type = &typeid(T);
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    v.kind = ArgKind::Int, v.i = static_cast<int64_t>(a), v.type = &typeid(T);
  } else if constexpr (std::is_floating_point_v<T>) {
    v.kind = ArgKind::Float, v.f = static_cast<double>(a), v.type = &typeid(T);
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
    v.kind = ArgKind::String, v.s = a, v.type = &typeid(T);
  } else {
    static_assert(sizeof(T) == 0,
                  "ag::function parameters must be ag::Tensor, ag::Variable&, a number, bool, enum or std::string");
  }
  return v;
}

}  // namespace ag::detail
