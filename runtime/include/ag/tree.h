// Trees of tensors (JAX's pytrees, tf.nest): a plain struct of tensors, numbers, containers and
// nested structs, read field by field without macros (ag/detail/reflect.h).
//   struct Params { ag::Tensor w, b; };
//   ag::tree_leaves(p)                          -> {p.w, p.b}
//   ag::tree_map([](ag::Tensor w, ag::Tensor g) { return w - 0.1f * g; }, p, grads)   -> Params
// A leaf is an ag::Tensor (also each element of a std::vector or std::array of them); any other
// field (a number, a string, a container of numbers) is not a leaf and is copied from the first
// tree by tree_map.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/detail/arg_view.h"
#include "ag/detail/struct_params.h"
#include "ag/error.h"
#include "ag/tensor.h"

namespace ag {
namespace detail {

template <class T>
inline constexpr bool is_tuple = false;
template <class... Ts>
inline constexpr bool is_tuple<std::tuple<Ts...>> = true;

template <class T, class F>
void for_each_leaf(const T& t, F& f) {
  if constexpr (std::is_same_v<T, Tensor>) {
    f(t);
  } else if constexpr (is_tensor_list_param<T>) {
    for (const Tensor& e : t) f(e);
  } else if constexpr (is_struct_param<T>) {
    for_each_field(t, [&]<class Field, size_t I>(const Field& field) { for_each_leaf(field, f); });
  } else if constexpr (is_tuple<T>) {
    std::apply([&](const auto&... e) { (for_each_leaf(e, f), ...); }, t);
  }
}

// `t` with leaf k replaced by fn(leaf k of t, leaf k of each of `others`).
template <class T, class F, class... Others>
T map_leaves(const T& t, F& fn, const Others&... others) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return static_cast<Tensor>(fn(t, others...));
  } else if constexpr (is_tensor_list_param<T>) {
    if (((others.size() != t.size()) || ...))
      throw ValueError("ag::tree_map: the trees have containers of different lengths");
    T out = t;
    for (size_t k = 0; k < t.size(); ++k) out[k] = static_cast<Tensor>(fn(t[k], others[k]...));
    return out;
  } else if constexpr (is_struct_param<T>) {
    auto field = [&]<size_t I>() {
      return map_leaves(std::get<I>(reflect::fields(t)), fn, std::get<I>(reflect::fields(others))...);
    };
    return [&]<size_t... I>(std::index_sequence<I...>) { return T{field.template operator()<I>()...}; }(
        std::make_index_sequence<reflect::field_count_v<T>>{});
  } else {
    return t;
  }
}

// `like` with its leaves taken, in order, from leaves[at...]; advances `at`.
template <class T>
T unflatten_leaves(const T& like, std::span<const Tensor> leaves, size_t& at) {
  auto next = [&](const Tensor&) -> Tensor {
    if (at >= leaves.size()) throw ValueError("ag::tree_unflatten: fewer tensors than the tree has leaves");
    return leaves[at++];
  };
  return map_leaves(like, next);
}

}  // namespace detail

// The tensors of a tree (a std::tuple of trees too), in field order (depth first).
template <class T>
std::vector<Tensor> tree_leaves(const T& tree) {
  std::vector<Tensor> out;
  auto push = [&](const Tensor& t) { out.push_back(t); };
  detail::for_each_leaf(tree, push);
  return out;
}

// A tree shaped like `like` whose leaves are `leaves`, in tree_leaves order.
template <class T>
T tree_unflatten(const T& like, std::span<const Tensor> leaves) {
  size_t at = 0;
  T out = detail::unflatten_leaves(like, leaves, at);
  if (at != leaves.size()) throw ValueError("ag::tree_unflatten: more tensors than the tree has leaves");
  return out;
}

// A tree shaped like `tree` whose leaves are fn(leaf, the same leaf of each of `others`), which
// have `tree`'s type (the same struct, container lengths equal). Works eagerly and while tracing.
template <class T, class F, class... Others>
T tree_map(F&& fn, const T& tree, const Others&... others) {
  static_assert((std::is_same_v<T, Others> && ...), "ag::tree_map: the trees must have the same type");
  return detail::map_leaves(tree, fn, others...);
}

}  // namespace ag
