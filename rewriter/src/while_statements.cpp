// Converts `while` with a tensor condition into ag::while_stmt (AutoGraph's control_flow
// converter, visit_While): the condition and the body become lambdas; the variables the body
// (or the condition) assigns that live outside the loop are carried around it. A lowered
// break or return stops the loop through its condition. A staged C-style for ends here too.
#include <fmt/format.h>

#include "emitter.h"
#include "templates.h"

namespace ag::rewriter {

void emitWhileStatement(SourceEmitter& e, const StmtNode& n, int indent) {
  const char* what = n.kind == NodeKind::For ? "for" : "while";
  std::vector<StateVar> vars = e.state(n, {n.body.get()}, {n.cond}, what);
  e.breakFlagDeclaration(n, indent);
  e.out.line(indent, fmt::format(tmpl::kWhileHead), n.line);
  e.out.line(indent + 4, fmt::format(tmpl::kCondLambda, fmt::arg("cond", e.loopCondition(n))),
             n.cond ? e.cx.src.line(n.cond->getBeginLoc()) : 0);
  e.lambda(n.body.get(), indent + 4, {}, e.iterationPrelude(n));
  e.stateTail(vars, n.line, indent + 4);
}

}  // namespace ag::rewriter
