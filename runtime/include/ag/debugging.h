// Assertions (tf.debugging.assert_*): checked at once eagerly, staged as an Assert node while
// tracing. A staged assert is a side effect: pruning keeps it even when nothing uses it, and it
// runs in program order with ag::print and Variable assignments on every call.
#pragma once

#include <optional>
#include <string>

#include "ag/function.h"
#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

// Fails when any element of `condition` (a bool tensor of any shape) is false: an
// InvalidArgumentError "assertion failed: <message>: ..." naming how many elements are false,
// the first one's index, and the line of the assert.
void assert_true(const Tensor& condition, std::string message = {}, Loc loc = Loc::current());

// Elementwise with NumPy broadcasting; fails unless the comparison holds for every element.
// The error shows both operands' values.
void assert_equal(Operand x, Operand y, std::string message = {}, Loc loc = Loc::current());
void assert_less(Operand x, Operand y, std::string message = {}, Loc loc = Loc::current());
void assert_greater(Operand x, Operand y, std::string message = {}, Loc loc = Loc::current());

namespace debugging {

// tf.debugging.enable_check_numerics: from now on, the first op that produces a NaN or an Inf
// in a float32 or float64 result raises InvalidArgumentError naming the op, the element, the
// result's dtype and shape, and the op's line — eagerly, on the graph interpreter and in
// compiled code (a Function compiles a second, checked version of its code: docs/debugging.md).
// Process-wide, like TensorFlow's.
void enable_check_numerics();
void disable_check_numerics();
bool check_numerics_enabled();

// tf.debugging.check_numerics: `t`, after raising InvalidArgumentError ("check_numerics:
// <message>: the tensor has NaN at element [1, 0] ...") when it holds a NaN or an Inf.
// An op like any other: staged while tracing, fused into compiled loops; its gradient passes
// through.
Tensor check_numerics(const Tensor& t, std::string message = {}, Loc loc = Loc::current());

// compare_with_eager's tolerance for floats: |compiled - eager| <= atol + rtol * |eager| (NaN
// matches NaN). Integers and bools must be equal.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// The first value of the graph whose compiled value differs from the eager one.
struct NodeDifference {
  std::string op;          // "ag::tanh", or "Variable 'w'" for a Variable's value after the call
  std::string value;       // the node in graph text: "%7 : f32[2,3]"
  SourceLoc loc;           // the op's line in your source
  int64_t element = -1;    // the first differing element (row-major); -1: the shapes differ
  std::string eager, compiled;  // the two values (whole when small, else around `element`)
};

struct EagerComparison {
  int64_t values_compared = 0;
  std::optional<NodeDifference> first_difference;  // none: every value agrees
  bool equal() const { return !first_difference; }
  // "compiled code agrees with eager execution on 12 values" or the difference, with its line.
  std::string str() const;
};

}  // namespace debugging

namespace detail {
debugging::EagerComparison compare_concrete_with_eager(ConcreteCore& c, std::span<const ArgView> args,
                                                       const debugging::Tolerance& tol);
}  // namespace detail

namespace debugging {

// Runs f(args...) compiled and again with the eager kernels node by node, and compares every
// value the graph computes (not only the results) and every Variable it writes; reports the first
// value that differs beyond `tol`. Traces if needed; the compiled run's side effects are the ones
// kept (Variables are restored between the runs; ag::print prints twice). Needs the JIT.
// AG_CHECK=eager does the same on every call of every Function, raising ag::InternalError at the
// first difference. docs/debugging.md.
template <class R, class... Args, class... CallArgs>
EagerComparison compare_with_eager(Tolerance tol, const Function<R(Args...)>& f, CallArgs&&... args) {
  const ConcreteFunction<R(Args...)> cf = f.get_concrete_function(args...);
  const auto views = detail::flat_views<Args...>(args...);
  return detail::compare_concrete_with_eager(
      *cf.core(), std::span<const detail::ArgView>(views.data(), detail::total_leaves<Args...>), tol);
}
template <class R, class... Args, class... CallArgs>
EagerComparison compare_with_eager(const Function<R(Args...)>& f, CallArgs&&... args) {
  return compare_with_eager(Tolerance{}, f, std::forward<CallArgs>(args)...);
}

}  // namespace debugging
}  // namespace ag
