// Converts a range-for over a tensor (ag::range(...) or any ag::Tensor: its first dimension)
// into ag::for_stmt: the loop variable becomes the body lambda's parameter; a lowered break
// or return becomes the extra test checked before each iteration.
#include <clang/AST/StmtCXX.h>
#include <fmt/format.h>

#include "emitter.h"
#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {

void emitRangeForStatement(SourceEmitter& e, const StmtNode& n, int indent) {
  const clang::VarDecl* var = n.loop_var;
  const std::string param =
      e.cx.src.text(clang::CharSourceRange::getTokenRange(var->getBeginLoc(), var->getLocation()));
  const bool scoped = n.init != nullptr;
  if (scoped) e.out.line(indent, "{", n.line), e.node(n.init.get(), indent + 2);
  const int inner = scoped ? indent + 2 : indent;
  std::vector<StateVar> vars = e.state(n, {n.body.get()}, {}, "for", var);
  e.breakFlagDeclaration(n, inner);
  const std::string extra = n.stop_flags.empty()
                                ? fmt::format(tmpl::kNoExtraTest)
                                : fmt::format(tmpl::kExtraTest, fmt::arg("test", notFlags(n.stop_flags)));
  e.out.line(inner, fmt::format(tmpl::kForHead, fmt::arg("iterable", e.printer.expression(n.range)), fmt::arg("extra_test", extra)),
             n.line);
  e.lambda(n.body.get(), inner + 4, param, e.iterationPrelude(n), e.cx.src.line(var->getBeginLoc()));
  e.stateTail(vars, n.line, inner + 4);
  if (scoped) e.out.line(indent, "}");
}

}  // namespace ag::rewriter
