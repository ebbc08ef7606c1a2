// Struct parameters and results (JAX's pytrees, tf.nest): a plain aggregate of tensors, numbers,
// containers and nested aggregates is flattened into one ArgView per leaf field, so the
// signature cache, tracing and messages (which see only leaves, named "params.w1") stay written
// once, outside the templates; the traced function gets the struct rebuilt from its leaves.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/detail/arg_view.h"
#include "ag/detail/reflect.h"

namespace ag::detail {

// The number of leaves (ArgViews) a parameter becomes: its fields', recursively, for a struct;
// one for anything else.
template <class P>
constexpr size_t leaf_count() {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_struct_param<T>) {
    return []<size_t... I>(std::index_sequence<I...>) {
      return (size_t{0} + ... + leaf_count<reflect::field_type<T, I>>());
    }(std::make_index_sequence<reflect::field_count_v<T>>{});
  } else {
    return 1;
  }
}

// An ag::Tensor, a std::array of them, or a struct of only these: what a result may be.
template <class T>
constexpr bool tensors_only() {
  if constexpr (is_struct_param<T>) {
    return []<size_t... I>(std::index_sequence<I...>) {
      return (tensors_only<reflect::field_type<T, I>>() && ...);
    }(std::make_index_sequence<reflect::field_count_v<T>>{});
  } else {
    return std::is_same_v<T, Tensor> || (is_tensor_list_param<T> && container_traits<T>::fixed_size);
  }
}

// Where field I's leaves start among T's.
template <class T, size_t I>
constexpr size_t field_leaf_offset() {
  return []<size_t... K>(std::index_sequence<K...>) {
    return (size_t{0} + ... + leaf_count<reflect::field_type<T, K>>());
  }(std::make_index_sequence<I>{});
}

// Where parameter I's leaves start among a call's.
template <size_t I, class... Args>
constexpr size_t param_leaf_offset() {
  constexpr size_t counts[] = {leaf_count<Args>()..., 0};
  size_t n = 0;
  for (size_t k = 0; k < I; ++k) n += counts[k];
  return n;
}

template <class... Args>
inline constexpr size_t total_leaves = (size_t{0} + ... + leaf_count<Args>());

// Calls f.template operator()<FieldType, I>(field) for each field of a struct.
template <class T, class F>
void for_each_field(T& s, F&& f) {
  auto refs = reflect::fields(s);
  [&]<size_t... I>(std::index_sequence<I...>) {
    (f.template operator()<reflect::field_type<std::remove_const_t<T>, I>, I>(std::get<I>(refs)), ...);
  }(std::make_index_sequence<std::tuple_size_v<decltype(refs)>>{});
}

// Writes the views of a parameter's leaves to out[0, leaf_count<P>()). `view` makes one leaf's
// view (view_of for calls; spec_holder's for get_concrete_function).
template <class P, class View>
void flatten_views(const std::remove_cvref_t<P>& a, ArgView* out, View&& view) {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_struct_param<T>) {
    for_each_field(a, [&]<class F, size_t I>(const F& field) {
      flatten_views<F>(field, out + field_leaf_offset<T, I>(), view);
    });
  } else {
    *out = view.template operator()<P>(a);
  }
}

// The leaves' names: "params.w1", "params.inner.b" (a struct), `base` (anything else).
template <class P>
void leaf_names(const std::string& base, std::vector<std::string>& out) {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_struct_param<T>) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      (leaf_names<reflect::field_type<T, I>>(base + "." + std::string(reflect::field_name<T, I>()), out), ...);
    }(std::make_index_sequence<reflect::field_count_v<T>>{});
  } else {
    out.push_back(base);
  }
}

template <class F>
constexpr void check_field();

// A struct's fields: each must be something a parameter may be, by value.
template <class T>
constexpr void check_struct_fields() {
  static_assert(reflect::field_count_v<T> > 0, "a struct parameter of ag::function needs at least one field");
  [&]<size_t... I>(std::index_sequence<I...>) {
    (check_field<reflect::field_type<T, I>>(), ...);
  }(std::make_index_sequence<reflect::field_count_v<T>>{});
}

template <class F>
constexpr void check_field() {
  if constexpr (is_struct_param<F>) {
    check_struct_fields<F>();
  } else {
    static_assert(!std::is_same_v<F, Variable> && !std::is_pointer_v<F>,
                  "a field of a struct parameter of ag::function cannot be an ag::Variable or a pointer: pass "
                  "Variables as their own ag::Variable& parameters (a Function matches them by identity)");
    static_assert(is_tensor_param<F> || is_tensor_list_param<F> || is_scalar_list_param<F> || std::is_arithmetic_v<F> ||
                      std::is_enum_v<F> || std::is_same_v<F, std::string>,
                  "a field of a struct parameter of ag::function must be an ag::Tensor, a number, bool, enum, "
                  "std::string, a std::vector/std::array of ag::Tensor or of numbers, or a nested struct of these");
  }
}

}  // namespace ag::detail
