// Converts `if` with a tensor condition into ag::if_stmt (AutoGraph's control_flow converter,
// visit_If): each branch becomes a lambda, and the variables the branches assign that live
// outside them are the state the operator carries. Guards made by the lowering of jumps
// (`if (!flag) rest`) come out the same way.
#include <fmt/format.h>

#include "emitter.h"
#include "templates.h"

namespace ag::rewriter {
namespace {

void emitIfCall(SourceEmitter& e, const StmtNode& n, int indent) {
  std::vector<StateVar> vars = e.state(n, {n.then_branch.get(), n.else_branch.get()}, {}, "if");
  if (n.stmt)
    e.checks.checkIf(n.stmt, vars, e.analysis.ofNode(n.then_branch.get()), e.analysis.ofNode(n.else_branch.get()));
  const std::string cond = n.cond ? e.printer.operand(n.cond) : n.cond_text;
  e.out.line(indent, fmt::format(tmpl::kIfHead, fmt::arg("cond", cond)), n.cond ? e.cx.src.line(n.cond->getBeginLoc()) : n.line);
  e.lambda(n.then_branch.get(), indent + 4);
  e.lambda(n.else_branch.get(), indent + 4);
  e.stateTail(vars, n.line, indent + 4);
}

}  // namespace

void emitIfStatement(SourceEmitter& e, const StmtNode& n, int indent) {
  if (!n.init) return emitIfCall(e, n, indent);
  // `if (init; cond)`: the init's variables stay scoped to the if.
  e.out.line(indent, "{", n.line);
  e.node(n.init.get(), indent + 2);
  emitIfCall(e, n, indent + 2);
  e.out.line(indent, "}");
}

}  // namespace ag::rewriter
