// Converts `do ... while` with a tensor condition into ag::do_while_stmt: the body runs once,
// then loops like a while (a staged While node when the condition is symbolic).
#include <clang/AST/Stmt.h>
#include <fmt/format.h>

#include "emitter.h"
#include "templates.h"

namespace ag::rewriter {

void emitDoWhileStatement(SourceEmitter& e, const StmtNode& n, int indent) {
  std::vector<StateVar> vars = e.state(n, {n.body.get()}, {n.cond}, "do-while");
  e.breakFlagDeclaration(n, indent);
  e.out.line(indent, fmt::format(tmpl::kDoWhileHead), n.line);
  e.lambda(n.body.get(), indent + 4, {}, e.iterationPrelude(n));
  const auto* s = llvm::cast<clang::DoStmt>(n.stmt);
  e.out.line(indent + 4, fmt::format(tmpl::kCondLambda, fmt::arg("cond", e.loopCondition(n))),
             e.cx.src.line(s->getCond()->getBeginLoc()));
  e.stateTail(vars, n.line, indent + 4);
}

}  // namespace ag::rewriter
