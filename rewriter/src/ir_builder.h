// Builds the statement tree of a function body from Clang's AST, deciding for each construct
// from static types whether it is staged, and finding the jumps that must become flags.
#pragma once

#include <clang/AST/Stmt.h>

#include "context.h"
#include "ir.h"

namespace ag::rewriter {

struct FunctionIr {
  StmtNodePtr body;
  std::vector<StmtNode*> jumps;         // every break/continue/return (not those of nested lambdas)
  bool returns_need_lowering = false;  // some return sits inside a staged construct
};

FunctionIr buildFunctionIr(Context& cx, const clang::CompoundStmt* body);

// A staged C-style for: its body becomes { iteration; increment; } (so a lowered continue
// still reaches the increment and a lowered break skips it). `run_when`: for a loop whose
// jumps were lowered already, the guard condition that runs the increment until a break or
// return sets its flag (`ag::not_(ag__break_1)`).
void stageIncrement(Context& cx, StmtNode& for_loop, const std::string& run_when = {});

}  // namespace ag::rewriter
