// Converts `a && b`, `a || b` and `!a` on tensors into the lazy ag::and_ / ag::or_ / ag::not_
// (AutoGraph's logical_expressions converter): the right operand becomes a lambda so that it is
// evaluated only when needed, also when the operator is staged.
#include <clang/AST/Expr.h>
#include <fmt/format.h>

#include "ast_queries.h"
#include "expr_printer.h"
#include "templates.h"

namespace ag::rewriter {

std::optional<std::string> convertLogicalExpression(ExprPrinter& printer, const clang::Expr* e) {
  Context& cx = printer.context();
  if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(e); bin && bin->isLogicalOp()) {
    if (!isTensorCondition(bin)) return std::nullopt;
    const char* form = bin->getOpcode() == clang::BO_LAnd ? tmpl::kAnd : tmpl::kOr;
    return fmt::format(fmt::runtime(form), fmt::arg("lhs", printer.operand(bin->getLHS())),
                       fmt::arg("rhs", printer.operand(bin->getRHS())),
                       fmt::arg("loc", cx.sourceLoc(cx.src.line(bin->getOperatorLoc()))));
  }
  if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(e); un && un->getOpcode() == clang::UO_LNot) {
    if (!isTensorCondition(un->getSubExpr())) return std::nullopt;
    return fmt::format(tmpl::kNot, fmt::arg("operand", printer.operand(un->getSubExpr())),
                       fmt::arg("loc", cx.sourceLoc(cx.src.line(un->getOperatorLoc()))));
  }
  return std::nullopt;
}

}  // namespace ag::rewriter
