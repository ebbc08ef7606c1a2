// Converts `c ? x : y` with a tensor condition into ag::if_exp (AutoGraph's
// conditional_expressions converter): both arms become lambdas, so only the chosen one runs
// natively, and both are traced into an If node when the condition is symbolic.
#include <clang/AST/Expr.h>
#include <fmt/format.h>

#include "ast_queries.h"
#include "expr_printer.h"
#include "templates.h"

namespace ag::rewriter {

std::optional<std::string> convertConditionalExpression(ExprPrinter& printer, const clang::Expr* e) {
  const auto* cond = llvm::dyn_cast<clang::ConditionalOperator>(e);
  if (!cond || !isTensorCondition(cond->getCond())) return std::nullopt;
  Context& cx = printer.context();
  return fmt::format(tmpl::kIfExp, fmt::arg("cond", printer.operand(cond->getCond())),
                     fmt::arg("then", printer.expression(cond->getTrueExpr())),
                     fmt::arg("else", printer.expression(cond->getFalseExpr())),
                     fmt::arg("loc", cx.sourceLoc(cx.src.line(cond->getQuestionLoc()))));
}

}  // namespace ag::rewriter
