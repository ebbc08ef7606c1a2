// What a traced function returns, as the Function's outputs: an ag::Tensor, a struct of tensors
// (its tensor fields, depth first), a std::array of tensors, a std::tuple of these, or void.
// flatten() lists the outputs after a trace; build() makes the C++ result from a call's outputs.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/detail/struct_params.h"
#include "ag/tensor.h"

namespace ag::detail {

template <class R, class = void>
struct outputs_of {
  static_assert(std::is_same_v<R, Tensor>,
                "a traced function returns ag::Tensor, a struct of tensors, a std::tuple of these, or void");
  static constexpr size_t count = 1;
  static void flatten(const R& r, std::vector<Tensor>& out) { out.push_back(r); }
  static R build(std::span<Tensor> out) { return std::move(out[0]); }
};
// A struct result: its tensor fields (std::array<ag::Tensor, N> and nested structs included),
// in declaration order.
template <class R>
struct outputs_of<R, std::enable_if_t<is_struct_param<R>>> {
  static_assert(tensors_only<R>(),
                "a struct a traced function returns holds only ag::Tensor fields (std::array<ag::Tensor, N> and nested "
                "structs of these): a result is computed, so it is a tensor");
  template <size_t I>
  using field = outputs_of<reflect::field_type<R, I>>;
  static constexpr size_t fields = reflect::field_count_v<R>;
  template <size_t I>
  static constexpr size_t offset() {
    return []<size_t... K>(std::index_sequence<K...>) { return (size_t{0} + ... + field<K>::count); }(
        std::make_index_sequence<I>{});
  }
  static constexpr size_t count = offset<fields>();
  static void flatten(const R& r, std::vector<Tensor>& out) {
    for_each_field(r, [&]<class F, size_t I>(const F& f) { outputs_of<F>::flatten(f, out); });
  }
  static R build(std::span<Tensor> out) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return R{field<I>::build(out.subspan(offset<I>(), field<I>::count))...};
    }(std::make_index_sequence<fields>{});
  }
};
template <size_t N>
struct outputs_of<std::array<Tensor, N>> {
  static constexpr size_t count = N;
  static void flatten(const std::array<Tensor, N>& r, std::vector<Tensor>& out) { out.insert(out.end(), r.begin(), r.end()); }
  static std::array<Tensor, N> build(std::span<Tensor> out) {
    return [&]<size_t... I>(std::index_sequence<I...>) { return std::array<Tensor, N>{std::move(out[I])...}; }(
        std::make_index_sequence<N>{});
  }
};
template <>
struct outputs_of<void> {
  static constexpr size_t count = 0;
  static void build(std::span<Tensor>) {}
};
// A tuple: its elements' outputs in order (each an ag::Tensor or a struct of tensors).
template <class... Ts>
struct outputs_of<std::tuple<Ts...>> {
  static constexpr size_t counts[] = {outputs_of<Ts>::count..., 0};
  static constexpr size_t count = (size_t{0} + ... + outputs_of<Ts>::count);
  static constexpr size_t offset(size_t i) {
    size_t n = 0;
    for (size_t k = 0; k < i; ++k) n += counts[k];
    return n;
  }
  static void flatten(const std::tuple<Ts...>& r, std::vector<Tensor>& out) {
    std::apply([&](const auto&... t) { (outputs_of<std::remove_cvref_t<decltype(t)>>::flatten(t, out), ...); }, r);
  }
  static std::tuple<Ts...> build(std::span<Tensor> out) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Ts...>{outputs_of<Ts>::build(out.subspan(offset(I), counts[I]))...};
    }(std::index_sequence_for<Ts...>{});
  }
};

}  // namespace ag::detail
