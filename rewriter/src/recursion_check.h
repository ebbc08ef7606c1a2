// The error for an AG_FUNCTION that calls itself under tensor control flow. Tracing stages
// every branch of a tensor-dependent if (and every loop body) whatever the tensor's value, so
// such a recursion, which ends eagerly, never ends while tracing (it used to overflow the stack).
#pragma once

#include <clang/AST/Decl.h>

#include "context.h"
#include "ir_builder.h"

namespace ag::rewriter {

// Reports each direct call of `fn` to itself inside a staged construct of `ir` (after the
// lowering of jumps and guards, so that a call after a tensor-dependent return counts), unless
// a plain C++ argument changes between the calls and may end the recursion while tracing.
void checkRecursionUnderStagedControlFlow(Context& cx, const clang::FunctionDecl* fn, const FunctionIr& ir);

}  // namespace ag::rewriter
