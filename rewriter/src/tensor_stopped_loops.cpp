// Stages loops that only a tensor can stop (beyond TensorFlow, which raises for them):
// `while (true) { ...; if (err < tol) break; }`, `for (;;)`, and any loop with a C++ bool
// condition that a tensor-dependent break or return leaves. Such a loop's lowered flag is its
// stop condition: emitted as ag::while_stmt, it runs natively while the flag is a concrete
// tensor and stages the remaining iterations once the flag becomes symbolic. It is staged only
// when that can be sound: every variable it carries is a tensor (a C++ counter such as
// `for (int i = 0; ...)` cannot be carried by a graph loop, so the loop stays plain and
// ag::loop_flag reports the tensor-dependent break at trace time), and no native return is
// left inside it (a return inside a lambda would leave the lambda, not the function).
#include "lowering.h"

#include <algorithm>
#include <string_view>

#include "ast_queries.h"
#include "expr_printer.h"

namespace ag::rewriter {
namespace {

bool hasNativeReturn(const StmtNode* n) {
  if (!n) return false;
  if (n->kind == NodeKind::Jump && n->jump == JumpKind::Return) return true;
  for (const StmtNode* c : childrenOf(*n))
    if (hasNativeReturn(c)) return true;
  return false;
}

// A break of this loop, or a return leaving it, set inside a staged construct.
bool stoppedByTensor(const StmtNode& loop, const FunctionIr& ir) {
  return std::any_of(ir.jumps.begin(), ir.jumps.end(), [&](const StmtNode* jump) {
    if (!jump->crosses_staged) return false;
    if (jump->jump == JumpKind::Break) return jump->target == &loop;
    if (jump->jump == JumpKind::Return)
      return std::find(jump->enclosing_loops.begin(), jump->enclosing_loops.end(), &loop) != jump->enclosing_loops.end();
    return false;
  });
}

// The first variable the loop would carry that a graph loop cannot ("'k' (an int)"), or "".
std::string uncarriable(StmtNode& loop, Context& cx, StateAnalysis& analysis, const Liveness& liveness) {
  for (const StateVar& v : analysis.stateOf({loop.body.get()}, {loop.cond, loop.inc})) {
    if (!v.root || !liveness.live(&loop, v.root)) continue;  // generated flags; dead variables
    if (!v.global && isCarriableType(v.type)) continue;
    clang::PrintingPolicy policy(cx.src.context().getLangOpts());
    policy.SuppressTagKeyword = true;
    const std::string type = v.type.isNull() ? "a C++ value" : v.type.getNonReferenceType().getUnqualifiedType().getAsString(policy);
    const char* article = std::string_view("aeiou").find(type[0]) != std::string_view::npos ? "an " : "a ";
    return "'" + v.name + "' (" + (v.type.isNull() ? "" : article) + type + ")";
  }
  return {};
}

void visit(Context& cx, StmtNode* n, const FunctionIr& ir, const Flags& flags, StateAnalysis& analysis,
           const Liveness& liveness) {
  if (!n) return;
  for (StmtNode* c : childrenOf(*n)) visit(cx, c, ir, flags, analysis, liveness);
  const bool candidate = n->kind == NodeKind::While || n->kind == NodeKind::For || n->kind == NodeKind::DoWhile;
  if (!candidate || n->staged || !flags.loops.count(n) || n->stop_flags.empty()) return;
  if (n->kind == NodeKind::While && llvm::cast<clang::WhileStmt>(n->stmt)->getConditionVariable()) return;
  if (!stoppedByTensor(*n, ir)) return;
  // Why it stays a plain loop, for the trace-time error of ag::loop_flag.
  if (hasNativeReturn(n->body.get())) {
    n->plain_reason = "it also contains a return on a C++ condition, which a graph loop cannot run";
    return;
  }
  if (const std::string v = uncarriable(*n, cx, analysis, liveness); !v.empty()) {
    n->plain_reason = "it changes " + v + ", which a graph loop cannot carry: make it an ag::Tensor (or loop over " +
                      "ag::range)";
    return;
  }
  n->staged = true;
  // The jumps are lowered already: the increment must skip itself after a break or return.
  if (n->kind == NodeKind::For && n->inc) stageIncrement(cx, *n, notFlags(n->stop_flags));
}

}  // namespace

void stageLoopsStoppedByTensors(Context& cx, FunctionIr& ir, const Flags& flags, StateAnalysis& analysis,
                                const Liveness& liveness) {
  visit(cx, ir.body.get(), ir, flags, analysis, liveness);
}

}  // namespace ag::rewriter
