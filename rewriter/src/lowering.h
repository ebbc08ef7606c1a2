// The passes that lower break, continue and return into flags (AutoGraph's break_statements,
// continue_statements and return_statements converters), and the guards they need. They run
// before the control-flow converters: a jump cannot leave a lambda, a flag can.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "context.h"
#include "ir_builder.h"
#include "liveness.h"
#include "state_analysis.h"

namespace clang {
class FunctionDecl;
}

namespace ag::rewriter {

// How the function (or lambda) being converted returns, for lowering its returns.
struct ReturnInfo {
  std::string type;            // the return type as written (or as deduced)
  bool is_void = false;
  bool is_tensor = false;      // ag::Tensor
  size_t tuple_size = 0;       // std::tuple<ag::Tensor...>: one retval per element
};
ReturnInfo returnInfoOf(const clang::FunctionDecl* fn, const SourceText& src);

// The flags the passes created, for the guard pass.
struct Flags {
  std::set<std::string> names;
  // Loops whose jumps are all lowered: staged loops, loops that a jump leaves from inside a
  // staged construct, and loops that a lowered return leaves (their bodies get guards, and a
  // native jump inside a guard would have to leave a lambda).
  std::set<const StmtNode*> loops;
  std::vector<std::string> retvals;  // the return value(s), in order
};

// Returns first: whether they are lowered decides which loops need flags.
void lowerReturnStatements(Context& cx, FunctionIr& ir, const ReturnInfo& info, Flags& flags);
void markLoopsNeedingFlags(FunctionIr& ir, Flags& flags);
void lowerBreakStatements(Context& cx, FunctionIr& ir, Flags& flags);
void lowerContinueStatements(Context& cx, FunctionIr& ir, Flags& flags);
// After a statement that may set a flag, the rest of its block runs under `if (!flag)`.
void guardStatementsAfterJumps(Context& cx, FunctionIr& ir, const Flags& flags);
// With lowered returns the function ends with `return ag__retval;` (after the guards: it runs
// whatever the flag says).
void appendFinalReturn(Context& cx, FunctionIr& ir, const ReturnInfo& info, const Flags& flags);

// Replaces each `kind` jump whose loop needs flags by `flag = true;`; `flag_of` names (and on
// first use creates) the loop's flag.
void lowerJumpsToFlag(FunctionIr& ir, JumpKind kind, Flags& flags, const std::function<std::string(StmtNode& loop)>& flag_of);

// Stages the plain loops that a tensor-dependent break or return leaves when that can be sound
// (tensor_stopped_loops.cpp): `while (true) { ... if (t) break; }` becomes a staged loop.
void stageLoopsStoppedByTensors(Context& cx, FunctionIr& ir, const Flags& flags, StateAnalysis& analysis,
                                const Liveness& liveness);

// A goto must stay inside one lambda of the rewritten code (goto_statements.cpp); run after the
// guards, which add lambdas of their own.
void checkGotoStatements(Context& cx, const FunctionIr& ir);

// `ag::not_(a)` / `ag::not_(a | b)`.
std::string notFlags(const std::vector<std::string>& flags);

}  // namespace ag::rewriter
