// Assertions (tf.debugging.assert_*): checked at once eagerly, staged as an Assert node while
// tracing. A staged assert is a side effect: pruning keeps it even when nothing uses it, and it
// runs in program order with ag::print and Variable assignments on every call.
#pragma once

#include <string>

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

}  // namespace debugging
}  // namespace ag
