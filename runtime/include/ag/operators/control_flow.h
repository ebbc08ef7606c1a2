// The control-flow operators that ag-rewrite emits (AutoGraph's operators/control_flow.py).
// Each runs natively when its condition is a C++ bool or a concrete tensor, and is staged into
// the graph (If/While nodes) when the condition is a symbolic tensor. See docs/operators.md.
#pragma once

#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ag/error.h"
#include "ag/operators/staging.h"
#include "ag/operators/state.h"
#include "ag/tensor.h"

namespace ag {

// No break in the loop: for_stmt's extra test.
struct NoExtraTest {};
inline constexpr NoExtraTest no_extra_test{};

// Loop options (AutoGraph's set_loop_options), the first statement of a loop body:
//   ag::set_loop_options({.shape_invariants = {{&x, {-1, 3}}}, .maximum_iterations = 100});
struct LoopOptions {
  std::vector<std::pair<const Tensor*, Shape>> shape_invariants = {};
  int64_t maximum_iterations = -1;
};
void set_loop_options(LoopOptions options);

// if (cond) then_fn(); else else_fn();
template <class Cond, class Then, class Else, class... Ts>
void if_stmt(const Cond& cond, Then&& then_fn, Else&& else_fn, std::tuple<Ts&...> vars, Names names, SourceLoc loc) {
  if constexpr (!std::is_same_v<Cond, Tensor>) {
    if (cond) then_fn();
    else else_fn();
  } else if (!cond.is_symbolic()) {
    if (detail::truth(cond, "if", loc)) then_fn();
    else else_fn();
  } else {
    detail::check_autograph("if", loc);
    auto state = detail::erase_state(vars, names);
    detail::staged_if(cond, then_fn, else_fn, state, loc);
  }
}

// while (cond_fn()) body_fn();
template <class CondFn, class Body, class... Ts>
void while_stmt(CondFn&& cond_fn, Body&& body_fn, std::tuple<Ts&...> vars, Names names, SourceLoc loc) {
  using C = std::decay_t<decltype(cond_fn())>;
  if constexpr (!std::is_same_v<C, Tensor>) {
    while (cond_fn()) body_fn();
  } else {
    auto state = detail::erase_state(vars, names);
    auto cond_tensor = [&]() -> Tensor { return cond_fn(); };
    detail::UnrolledLoop unrolled(loc);
    for (;;) {
      // While tracing, a condition that turns symbolic stages the rest of the loop; its probe
      // evaluation is rolled back so nothing of it stays in the graph.
      bool symbolic = false;
      Tensor c = detail::tracing() ? detail::probe_condition(cond_tensor, state, symbolic, loc) : cond_tensor();
      if (symbolic) {
        detail::check_autograph("while", loc);
        detail::staged_while(cond_tensor, body_fn, state, loc);
        return;
      }
      if (!detail::truth(c, "while", loc)) return;
      unrolled.iteration();
      body_fn();
    }
  }
}

// do body_fn(); while (cond_fn());
template <class Body, class CondFn, class... Ts>
void do_while_stmt(Body&& body_fn, CondFn&& cond_fn, std::tuple<Ts&...> vars, Names names, SourceLoc loc) {
  body_fn();
  while_stmt(cond_fn, body_fn, vars, names, loc);
}

// for (auto x : iterable) body_fn(x);  extra_test (break) is checked before each iteration.
template <class Iterable, class Extra, class Body, class... Ts>
void for_stmt(Iterable&& iterable, Extra&& extra_test, Body&& body_fn, std::tuple<Ts&...> vars, Names names,
              SourceLoc loc) {
  constexpr bool has_extra = !std::is_same_v<std::decay_t<Extra>, NoExtraTest>;
  if constexpr (std::is_same_v<std::decay_t<Iterable>, Tensor>) {
    const Tensor& it = iterable;
    auto extra_tensor = [&]() -> Tensor {
      if constexpr (has_extra) return extra_test();
      else return Tensor(true);
    };
    if (it.is_symbolic()) {
      detail::check_autograph("for", loc);
      auto state = detail::erase_state(vars, names);
      detail::FnRef<Tensor()> extra(extra_tensor);
      detail::staged_for(it, 0, has_extra ? &extra : nullptr, body_fn, state, loc);
      return;
    }
    if (it.rank() == 0) throw ValueError("for: cannot iterate over a scalar tensor" + loc.str());
    const int64_t n = it.shape()[0];
    detail::UnrolledLoop unrolled(loc);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (has_extra) {
        Tensor e = extra_tensor();
        if (e.is_symbolic()) {  // a tensor-dependent break: stage the remaining iterations
          detail::check_autograph("break in a for", loc);
          auto state = detail::erase_state(vars, names);
          detail::FnRef<Tensor()> extra(extra_tensor);
          detail::staged_for(it, i, &extra, body_fn, state, loc);
          return;
        }
        if (!detail::truth(e, "for", loc)) return;
      }
      unrolled.iteration();
      body_fn(it[i]);
    }
  } else {
    for (auto&& x : iterable) {
      if constexpr (has_extra) {
        auto e = extra_test();
        if constexpr (std::is_same_v<std::decay_t<decltype(e)>, Tensor>) {
          if (e.is_symbolic())
            throw ConversionError("a tensor-dependent break inside a loop over a C++ container" +
                                  (loc.known() ? " at " + loc.str() : std::string()) +
                                  ": the loop runs while tracing and cannot stop on a tensor's value; loop over a "
                                  "tensor (or ag::range) instead");
        }
        if (!detail::truth(e, "for", loc)) return;
      }
      body_fn(x);
    }
  }
}

// The condition of a plain C++ loop that contains a lowered break/return: a flag that became
// symbolic cannot stop a loop that runs while tracing. `why_plain`: why ag-rewrite could not
// stage the loop (a loop stopped by a tensor that carries a C++ counter), for the error.
bool loop_flag(const Tensor& keep_going, SourceLoc loc, const char* why_plain = nullptr);
inline bool loop_flag(bool keep_going, SourceLoc, const char* = nullptr) { return keep_going; }

}  // namespace ag
