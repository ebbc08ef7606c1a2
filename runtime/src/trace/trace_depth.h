// A bound on how deeply staged control flow may nest while tracing. Tracing a tensor-dependent
// if traces both branches whatever the condition's value, so a function that calls itself
// under tensor control flow (which ends eagerly) never stops recursing while tracing: without
// a bound it overflows the stack. TensorFlow stops such a trace with a RecursionError; agc
// raises a ConversionError naming the Function and the construct that keeps nesting.
#pragma once

#include <cstddef>
#include <string>

#include "ag/error.h"

namespace ag::detail {

class TraceFrame;

// Nested frames (branches and loop bodies inside each other) a trace may hold. Python's
// recursion limit is 1000 and real code nests a few levels; each level costs a few KB of
// stack (the user's function, the operator, the staging code), so 1000 levels fit the
// default 8 MB stack several times over.
inline constexpr int kMaxTraceDepth = 1000;
// The stack a thread keeps free while tracing: another level of tracing, then the unwinding
// of the error, must fit in it (threads with small stacks, sanitizer builds with big frames).
size_t trace_stack_reserve();

// Throws ConversionError when a frame `name` at `loc` nested at `depth` under `parent` would
// exceed kMaxTraceDepth or leave less than trace_stack_reserve() of this thread's stack.
void check_trace_depth(const TraceFrame* parent, int depth, const std::string& name, SourceLoc loc);

}  // namespace ag::detail
