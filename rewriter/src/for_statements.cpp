// Converts a C-style `for (init; cond; inc)` with a tensor condition into `init;` and an
// ag::while_stmt whose body ends with the increment (the IR builder appended it, so a lowered
// continue still reaches it and a lowered break skips it).
#include <clang/AST/Stmt.h>

#include "emitter.h"

namespace ag::rewriter {

void emitForStatement(SourceEmitter& e, const StmtNode& n, int indent) {
  const bool scoped = n.init && llvm::isa<clang::DeclStmt>(n.init->stmt);  // `for (Tensor i = 0; ...)`
  if (scoped) e.out.line(indent, "{", n.line);
  const int inner = scoped ? indent + 2 : indent;
  if (n.init) e.node(n.init.get(), inner);
  emitWhileStatement(e, n, inner);
  if (scoped) e.out.line(indent, "}");
}

}  // namespace ag::rewriter
