// Converts a C-style `for (init; cond; inc)` with a tensor condition into `init;` and an
// ag::while_stmt whose body ends with the increment (the IR builder appended it, so a lowered
// continue still reaches it and a lowered break skips it).
#include <clang/AST/Stmt.h>
#include <fmt/format.h>

#include "emitter.h"
#include "templates.h"

namespace ag::rewriter {

void emitForStatement(Emitter& e, const Node& n, int indent) {
  const bool scoped = n.init && llvm::isa<clang::DeclStmt>(n.init->stmt);
  if (scoped) e.out.line(indent, "{", n.line);
  const int inner = scoped ? indent + 2 : indent;
  if (n.init) e.node(n.init.get(), inner);
  std::vector<StateVar> vars = e.state(n, {n.body.get()}, {n.cond, n.inc}, "for");
  if (n.stmt) e.checks.checkLoop(n.stmt, vars);
  e.breakFlagDeclaration(n, inner);
  e.out.line(inner, fmt::format(tmpl::kWhileHead), n.line);
  e.out.line(inner + 4, fmt::format(tmpl::kCondLambda, fmt::arg("cond", e.loopCondition(n))));
  std::vector<std::string> prelude;
  if (!n.continue_flag.empty()) prelude.push_back(fmt::format(tmpl::kFlagDecl, fmt::arg("flag", n.continue_flag)));
  e.lambda(n.body.get(), inner + 4, {}, prelude);
  e.stateTail(vars, n.line, inner + 4);
  if (scoped) e.out.line(indent, "}");
}

}  // namespace ag::rewriter
