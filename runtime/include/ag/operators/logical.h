// Lazy logical operators and the conditional expression, as ag-rewrite emits them for &&, ||,
// ! and ?: when an operand is a tensor (AutoGraph's operators/logical.py and if_exp).
#pragma once

#include <type_traits>
#include <vector>

#include "ag/operators/staging.h"
#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

namespace detail {
template <class T>
inline constexpr bool is_tensor_v = std::is_same_v<std::decay_t<T>, Tensor>;
// A condition as a bool scalar tensor (non-bool numbers compare with 0).
Tensor as_bool_tensor(const Tensor& t, const char* construct, SourceLoc loc);
// !t of a condition, recorded at `loc` (the rewritten construct's line).
Tensor not_tensor(const Tensor& t, SourceLoc loc);
inline Tensor as_bool_tensor(bool b, const char*, SourceLoc) { return Tensor(b); }
}  // namespace detail

// cond ? true_fn() : false_fn(). Staged (an If node) when cond is a symbolic tensor.
template <class Cond, class T, class F>
auto if_exp(const Cond& cond, T&& true_fn, F&& false_fn, SourceLoc loc = {}) {
  using RT = std::decay_t<decltype(true_fn())>;
  using RF = std::decay_t<decltype(false_fn())>;
  if constexpr (!detail::is_tensor_v<Cond> && !detail::is_tensor_v<RT> && !detail::is_tensor_v<RF>) {
    return cond ? true_fn() : false_fn();
  } else {
    if constexpr (detail::is_tensor_v<Cond>) {
      if (cond.is_symbolic()) {
        detail::check_autograph("?:", loc);
        auto t = [&] { return std::vector<Tensor>{Tensor(true_fn())}; };
        auto f = [&] { return std::vector<Tensor>{Tensor(false_fn())}; };
        return detail::staged_cond(cond, t, f, loc)[0];
      }
    }
    return detail::truth(cond, "?:", loc) ? Tensor(true_fn()) : Tensor(false_fn());
  }
}

// a && b_fn(): b_fn runs only when needed (staged lazily when a is symbolic).
template <class A, class BFn>
auto and_(const A& a, BFn&& b_fn, SourceLoc loc = {}) {
  using B = std::decay_t<decltype(b_fn())>;
  if constexpr (!detail::is_tensor_v<A> && !detail::is_tensor_v<B>) {
    return a && b_fn();
  } else {
    if constexpr (detail::is_tensor_v<A>) {
      if (a.is_symbolic()) {
        detail::check_autograph("&&", loc);
        auto t = [&] { return std::vector<Tensor>{detail::as_bool_tensor(b_fn(), "&&", loc)}; };
        auto f = [&] { return std::vector<Tensor>{Tensor(false)}; };
        return detail::staged_cond(detail::as_bool_tensor(a, "&&", loc), t, f, loc)[0];
      }
    }
    if (!detail::truth(a, "&&", loc)) return Tensor(false);
    return detail::as_bool_tensor(b_fn(), "&&", loc);
  }
}

// a || b_fn(): b_fn runs only when needed.
template <class A, class BFn>
auto or_(const A& a, BFn&& b_fn, SourceLoc loc = {}) {
  using B = std::decay_t<decltype(b_fn())>;
  if constexpr (!detail::is_tensor_v<A> && !detail::is_tensor_v<B>) {
    return a || b_fn();
  } else {
    if constexpr (detail::is_tensor_v<A>) {
      if (a.is_symbolic()) {
        detail::check_autograph("||", loc);
        auto t = [&] { return std::vector<Tensor>{Tensor(true)}; };
        auto f = [&] { return std::vector<Tensor>{detail::as_bool_tensor(b_fn(), "||", loc)}; };
        return detail::staged_cond(detail::as_bool_tensor(a, "||", loc), t, f, loc)[0];
      }
    }
    if (detail::truth(a, "||", loc)) return Tensor(true);
    return detail::as_bool_tensor(b_fn(), "||", loc);
  }
}

// !a
inline bool not_(bool a) { return !a; }
inline Tensor not_(const Tensor& a, SourceLoc loc = {}) { return detail::not_tensor(a, loc); }

}  // namespace ag
