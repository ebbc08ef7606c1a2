// ArgView: a uniform, allocation-free view of one argument of a Function call, so that the
// signature cache and tracing are written once, outside the templates.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "ag/tensor.h"
#include "ag/tensor_spec.h"

namespace ag {
class Variable;
}

namespace ag::detail {

// TensorList: a std::vector or std::array of ag::Tensor; TensorSpecList: the std::vector of
// TensorSpec that get_concrete_function takes for one; ScalarList: a std::vector or std::array
// of plain numbers (part of the signature by value, like a plain scalar). Baked: a plain
// argument left out of a ConcreteFunction call, which takes the value it was traced with.
enum class ArgKind : uint8_t {
  Tensor, TensorSpec, Variable, Bool, Int, Float, String,
  TensorList, TensorSpecList, ScalarList, Baked,
};

// Reads element k of a ScalarList's container as key bits: the value as int64 (Bool, Int) or
// the bits of the value as double (Float).
using ScalarAt = uint64_t (*)(const void* container, size_t k);

struct ArgView {
  ArgKind kind = ArgKind::Tensor;
  ArgKind elem_kind = ArgKind::Tensor;  // ScalarList: Bool, Int or Float
  bool fixed_size = false;              // lists: a std::array (for messages)
  // The argument object (Tensor, TensorSpec, Variable, or the value); TensorList and
  // TensorSpecList: their first element (both containers are contiguous); ScalarList: the container.
  const void* ptr = nullptr;
  int64_t i = 0;  // Bool, Int: the value; lists: the number of elements
  double f = 0;
  std::string_view s;
  const std::type_info* type = nullptr;  // a plain value's C++ type; ScalarList: its element type
  ScalarAt scalar_at = nullptr;          // ScalarList

  const Tensor& tensor() const { return *static_cast<const Tensor*>(ptr); }
  const TensorSpec& spec() const { return *static_cast<const TensorSpec*>(ptr); }
  size_t count() const { return static_cast<size_t>(i); }
  const Tensor* tensors() const { return static_cast<const Tensor*>(ptr); }
  const TensorSpec* specs() const { return static_cast<const TensorSpec*>(ptr); }
};

// How many graph parameters (placeholders) an argument becomes.
inline size_t tensor_count(const ArgView& a) {
  switch (a.kind) {
    case ArgKind::Tensor:
    case ArgKind::TensorSpec: return 1;
    case ArgKind::TensorList:
    case ArgKind::TensorSpecList: return a.count();
    default: return 0;
  }
}

// Calls f(tensor) for every tensor of a call's arguments, in graph-parameter order.
template <class F>
void for_each_tensor(std::span<const ArgView> args, F&& f) {
  for (const ArgView& a : args) {
    if (a.kind == ArgKind::Tensor) [[likely]] {
      f(a.tensor());
    } else if (a.kind == ArgKind::TensorList) {
      for (size_t k = 0; k < a.count(); ++k) f(a.tensors()[k]);
    }
  }
}

template <class T>
struct container_traits {
  static constexpr bool fixed_size = false;
  using element = void;
};
template <class E, class A>
struct container_traits<std::vector<E, A>> {
  static constexpr bool fixed_size = false;
  using element = E;
};
template <class E, size_t N>
struct container_traits<std::array<E, N>> {
  static constexpr bool fixed_size = true;
  using element = E;
};
// The element type of a std::vector or std::array parameter; void for anything else.
template <class P>
using element_of = typename container_traits<std::remove_cvref_t<P>>::element;

template <class P>
inline constexpr bool is_tensor_param = std::is_same_v<std::remove_cvref_t<P>, Tensor>;
template <class P>
inline constexpr bool is_variable_param = std::is_same_v<std::remove_cvref_t<P>, Variable>;
// std::vector<ag::Tensor> or std::array<ag::Tensor, N>.
template <class P>
inline constexpr bool is_tensor_list_param = std::is_same_v<element_of<P>, Tensor>;
// A std::vector or std::array of bool, integers, floating point or enums.
template <class P>
inline constexpr bool is_scalar_list_param = std::is_arithmetic_v<element_of<P>> || std::is_enum_v<element_of<P>>;
// A container of Variables (or of pointers or references to them).
template <class P>
inline constexpr bool is_variable_list_param =
    std::is_same_v<element_of<P>, Variable> || std::is_same_v<element_of<P>, Variable*> ||
    std::is_same_v<element_of<P>, const Variable*> || std::is_same_v<element_of<P>, std::reference_wrapper<Variable>>;


// A plain struct (an aggregate class that is not a std::array, nor one of agc's own types):
// flattened into its fields (struct_params.h).
template <class P>
inline constexpr bool is_struct_param = [] {
  using T = std::remove_cvref_t<P>;
  if constexpr (!std::is_class_v<T> || !std::is_aggregate_v<T> || !std::is_void_v<element_of<T>>) return false;
  else return !std::is_same_v<T, Tensor> && !std::is_same_v<T, TensorSpec>;
}();

// A parameter that is part of the signature by value (a number, bool, enum, string, or a
// container of numbers): a ConcreteFunction call may leave it out (it is baked in). A struct
// never is: it is always given.
template <class P>
inline constexpr bool is_plain_param =
    !is_tensor_param<P> && !is_variable_param<P> && !is_tensor_list_param<P> && !is_struct_param<P>;

template <class P>
constexpr void check_not_variable_list() {
  static_assert(!is_variable_list_param<P>,
                "a container of ag::Variable is not an ag::function parameter: a Function matches Variables by "
                "identity, so take each Variable as its own ag::Variable& parameter (or pass their values as a "
                "std::vector<ag::Tensor>)");
}

// How a Function's call operator takes a parameter: a Tensor, a container or a struct declared
// by value or by const reference is taken by const reference (copying a Tensor would be two
// atomic operations per call, copying a std::vector a heap allocation, and the traced function
// never sees the caller's object anyway); anything else as declared.
template <class P>
inline constexpr bool is_taken_by_const_ref =
    (is_tensor_param<P> || is_tensor_list_param<P> || is_scalar_list_param<P> || is_struct_param<P>) &&
    (!std::is_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>);
template <class P>
using call_param_t = std::conditional_t<is_taken_by_const_ref<P>, const std::remove_cvref_t<P>&, P>;

template <class E>
uint64_t scalar_bits(const E& x) {
  if constexpr (std::is_floating_point_v<E>) return std::bit_cast<uint64_t>(static_cast<double>(x));
  else return static_cast<uint64_t>(static_cast<int64_t>(x));
}

template <class E>
constexpr ArgKind scalar_kind() {
  if constexpr (std::is_same_v<E, bool>) return ArgKind::Bool;
  else if constexpr (std::is_floating_point_v<E>) return ArgKind::Float;
  else return ArgKind::Int;
}

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
  } else if constexpr (is_tensor_list_param<P>) {
    v.kind = ArgKind::TensorList, v.ptr = a.data(), v.i = static_cast<int64_t>(a.size());
    v.fixed_size = container_traits<T>::fixed_size;
  } else if constexpr (is_scalar_list_param<P>) {
    using E = typename container_traits<T>::element;
    v.kind = ArgKind::ScalarList, v.elem_kind = scalar_kind<E>(), v.i = static_cast<int64_t>(a.size());
    v.fixed_size = container_traits<T>::fixed_size, v.type = &typeid(E);
    // Through the container, not data(): std::vector<bool> has none.
    v.scalar_at = [](const void* c, size_t k) { return scalar_bits<E>((*static_cast<const T*>(c))[k]); };
  } else if constexpr (is_variable_list_param<P>) {
    check_not_variable_list<P>();
  } else {
    static_assert(sizeof(T) == 0,
                  "ag::function parameters must be ag::Tensor, ag::Variable&, a number, bool, enum, std::string, or a "
                  "std::vector/std::array of ag::Tensor or of numbers");
  }
  return v;
}

}  // namespace ag::detail
