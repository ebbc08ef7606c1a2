// check_numerics (docs/debugging.md): the switch, which results are checked, and the one error
// message every mode raises (eager kernels, the interpreter, compiled code).
#pragma once

#include <cstdint>
#include <string>

#include "ag/detail/call_hooks.h"
#include "ag/graph/graph.h"

namespace ag::detail {

// ag::debugging::enable_check_numerics(): a bit of the call-hook word (call_hooks.h), read on
// every eager op and every Function call.
inline bool check_numerics_enabled() { return call_hook_on(CallHook::CheckNumerics); }

// Whether a result of `op` with dtype `dtype` is checked: float32 and float64 results of the ops
// that compute (not data movement, selects, state or control flow, whose values some other op
// computed and was checked for). A float16 result is checked in float32, before its rounding cast.
bool checks_numerics_of(OpKind op, DType dtype);

// What a CheckNumerics node reports: attrs.strings = {message, producer}. The pass that inserts
// the checks sets `producer` (the checked op's user name); ag::debugging::check_numerics sets
// `message`.
Attrs check_numerics_attrs(std::string message, std::string producer);

// How a non-finite value is classed in messages (and in compiled code's failure codes).
enum class NonFiniteKind : int64_t { NaN = 0, PositiveInf = 1, NegativeInf = 2 };
NonFiniteKind non_finite_kind(double v);

// The InvalidArgumentError of a CheckNumerics node `attrs` that found a `kind` value at flat
// element `index` (-1: not known) of a result of type `type` (the static type in compiled code,
// the concrete one elsewhere).
[[noreturn]] void throw_non_finite(const Attrs& attrs, const TensorType& type, int64_t index, NonFiniteKind kind,
                                   SourceLoc loc);

// The eager check of an op's result: raises the error above at the first NaN or Inf.
void check_result_numerics(OpKind op, const Tensor& result, SourceLoc loc);

}  // namespace ag::detail
