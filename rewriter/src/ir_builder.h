// Builds the statement tree of a function body from Clang's AST, deciding for each construct
// from static types whether it is staged, and finding the jumps that must become flags.
#pragma once

#include <clang/AST/Stmt.h>

#include "context.h"
#include "ir.h"

namespace ag::rewriter {

struct FunctionIr {
  NodePtr body;
  std::vector<Node*> jumps;         // every break/continue/return (not those of nested lambdas)
  bool returns_need_lowering = false;  // some return sits inside a staged construct
};

FunctionIr buildFunctionIr(Context& cx, const clang::CompoundStmt* body);

}  // namespace ag::rewriter
