// Functional control flow: ag::cond and ag::while_loop (tf.cond, tf.while_loop).
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "ag/operators/control_flow.h"
#include "ag/operators/logical.h"

namespace ag {

// pred ? true_fn() : false_fn(), where the functions return a Tensor or a tuple of Tensors.
// Eagerly, one function runs. While tracing, an If node is built even for a concrete `pred`
// (tf.cond in a tf.function): both functions are traced and must return the same dtypes; the
// optimizer then keeps only the taken branch of a constant predicate.
template <class TrueFn, class FalseFn>
auto cond(const Tensor& pred, TrueFn&& true_fn, FalseFn&& false_fn, SourceLoc loc = {}) {
  using R = std::decay_t<decltype(true_fn())>;
  if constexpr (std::is_same_v<R, Tensor>) {
    if (!detail::tracing()) return detail::truth(pred, "ag::cond", loc) ? Tensor(true_fn()) : Tensor(false_fn());
    auto t = [&] { return std::vector<Tensor>{Tensor(true_fn())}; };
    auto f = [&] { return std::vector<Tensor>{Tensor(false_fn())}; };
    return detail::staged_cond(pred, t, f, loc)[0];
  } else {
    auto flatten = [](const R& r) {
      return std::apply([](const auto&... t) { return std::vector<Tensor>{Tensor(t)...}; }, r);
    };
    if (!detail::tracing()) return detail::truth(pred, "ag::cond", loc) ? R(true_fn()) : R(false_fn());
    auto t = [&] { return flatten(true_fn()); };
    auto f = [&] { return flatten(false_fn()); };
    std::vector<Tensor> out = detail::staged_cond(pred, t, f, loc);
    return [&]<size_t... I>(std::index_sequence<I...>) { return R{out[I]...}; }(std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

namespace detail {
// "loop_vars[i]": how errors name ag::while_loop's variables (static storage, as Names needs).
const char* loop_var_name(size_t i);
}  // namespace detail

// Repeats `vars = body_fn(vars...)` while cond_fn(vars...) holds; returns the final vars.
// body_fn returns a Tensor (one loop variable) or a tuple with one Tensor per variable.
// Eagerly it is a C++ loop. While tracing it is always a While node (tf.while_loop in a
// tf.function), also when the starting values are concrete: the loop is never unrolled.
template <class CondFn, class BodyFn, class... Ts>
std::tuple<Ts...> while_loop(CondFn&& cond_fn, BodyFn&& body_fn, std::tuple<Ts...> vars, SourceLoc loc = {}) {
  static_assert((std::is_same_v<Ts, Tensor> && ...), "ag::while_loop: loop variables must be ag::Tensor");
  auto cond = [&] { return std::apply([&](auto&... v) { return Tensor(cond_fn(v...)); }, vars); };
  auto body = [&] {
    if constexpr (sizeof...(Ts) == 1) {
      std::get<0>(vars) = std::apply([&](auto&... v) { return Tensor(body_fn(v...)); }, vars);
    } else {
      vars = std::apply([&](auto&... v) { return std::tuple<Ts...>(body_fn(v...)); }, vars);
    }
  };
  if (!detail::tracing()) {
    while (detail::truth(cond(), "ag::while_loop", loc)) body();
    return vars;
  }
  auto refs = std::apply([](auto&... v) { return std::tuple<Ts&...>(v...); }, vars);
  const char* names[sizeof...(Ts)];
  for (size_t i = 0; i < sizeof...(Ts); ++i) names[i] = detail::loop_var_name(i);
  auto state = detail::erase_state(refs, Names(std::span<const char* const>(names, sizeof...(Ts))));
  detail::staged_while(cond, body, state, loc);
  return vars;
}

}  // namespace ag
