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

}  // namespace ag
