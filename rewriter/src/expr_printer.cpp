// Splices converted sub-expressions and lambda bodies into the original text of a statement.
#include "expr_printer.h"

#include <clang/AST/ExprCXX.h>

#include <algorithm>

#include "ast_queries.h"

namespace ag::rewriter {
namespace {

// A conversion by constructor: one argument as written, any others defaulted (ag::Operand's
// constructors take the caller's std::source_location that way).
bool isConvertingConstruction(const clang::Stmt* s) {
  const auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(s);
  if (!construct || construct->getNumArgs() == 0) return false;
  for (unsigned i = 1; i < construct->getNumArgs(); ++i)
    if (!llvm::isa<clang::CXXDefaultArgExpr>(construct->getArg(i))) return false;
  return true;
}

// Nodes the compiler wraps around a value on its way to where it is used.
bool isTransparent(const clang::Stmt* s) {
  return llvm::isa<clang::ParenExpr, clang::ImplicitCastExpr, clang::MaterializeTemporaryExpr,
                   clang::CXXBindTemporaryExpr, clang::ExprWithCleanups, clang::CXXFunctionalCastExpr,
                   clang::CXXStaticCastExpr>(s) ||
         isConvertingConstruction(s);
}

// Whether the value of the innermost node in `parents`' child becomes an ag::Tensor.
bool usedAsTensor(const std::vector<const clang::Stmt*>& parents) {
  for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
    const auto* e = llvm::dyn_cast<clang::Expr>(*it);
    if (e && isTensorType(e->getType())) return true;
    if (!isTransparent(*it)) return false;
  }
  return false;
}

// The logical or conditional expression on tensors that `e` is (through parentheses), which
// its converter rewrites; null when `e` is none.
const clang::Expr* convertedConstruct(const clang::Expr* e) {
  e = e->IgnoreUnlessSpelledInSource();
  while (const auto* paren = llvm::dyn_cast<clang::ParenExpr>(e)) e = paren->getSubExpr()->IgnoreUnlessSpelledInSource();
  if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(e); bin && bin->isLogicalOp())
    return isTensorCondition(bin) ? e : nullptr;
  if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(e); un && un->getOpcode() == clang::UO_LNot)
    return isTensorCondition(un->getSubExpr()) ? e : nullptr;
  if (const auto* cond = llvm::dyn_cast<clang::ConditionalOperator>(e))
    return isTensorCondition(cond->getCond()) ? e : nullptr;
  return nullptr;
}

// The tokens a conversion of `e` replaces: its operators (its operands are kept as written).
std::vector<clang::SourceLocation> operatorTokens(const clang::Expr* e) {
  if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(e)) return {bin->getOperatorLoc()};
  if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(e)) return {un->getOperatorLoc()};
  if (const auto* cond = llvm::dyn_cast<clang::ConditionalOperator>(e)) return {cond->getQuestionLoc(), cond->getColonLoc()};
  return {};
}

}  // namespace

std::string ExprPrinter::statement(const clang::Stmt* s) {
  auto range = cx_.src.statementRange(s);
  if (!range) {
    cx_.diags.report(Diag::PartOfMacro, s->getBeginLoc());
    return {};
  }
  return spliced(*range, s);
}

std::string ExprPrinter::expression(const clang::Expr* e) {
  auto range = cx_.src.fileRange(e->getSourceRange());
  if (!range) {
    cx_.diags.report(Diag::InsideMacro, e->getBeginLoc(), {"this expression"});
    return {};
  }
  return spliced(*range, e);
}

bool ExprPrinter::convertible(const clang::Expr* e) {
  const clang::Expr* construct = convertedConstruct(e);
  if (!construct) return true;
  // Parentheses from a macro (`#define P(a) (a)`) would have to be taken apart too.
  bool ok = construct == e->IgnoreUnlessSpelledInSource();
  for (clang::SourceLocation t : operatorTokens(construct)) ok = ok && SourceText::editable(t);
  ok = ok && cx_.src.fileRange(construct->getSourceRange()).has_value();
  if (!ok) cx_.diags.report(Diag::InsideMacro, construct->getBeginLoc(), {"this expression on tensors"});
  return ok;
}

std::string ExprPrinter::operand(const clang::Expr* e) {
  const clang::Expr* spelled = e->IgnoreUnlessSpelledInSource();
  if (const auto* paren = llvm::dyn_cast<clang::ParenExpr>(spelled);
      paren && SourceText::editable(paren->getLParen()) && SourceText::editable(paren->getRParen()))
    return "(" + operand(paren->getSubExpr()) + ")";
  if (convertible(spelled)) {
    if (auto converted = convertLogicalExpression(*this, spelled)) return *converted;
    if (auto converted = convertConditionalExpression(*this, spelled)) return *converted;
  }
  return expression(e);
}

bool ExprPrinter::changes(const clang::Stmt* s) {
  if (auto range = cx_.src.statementRange(s)) return spliced(*range, s) != cx_.src.text(*range);
  // A statement that is part of a macro use (SourceEmitter prints the use): whether it would need any.
  std::vector<Splice> splices;
  std::vector<const clang::Stmt*> parents;
  collect(s, parents, splices);
  return !splices.empty();
}

std::string ExprPrinter::spliced(clang::CharSourceRange range, const clang::Stmt* root) {
  std::string text = cx_.src.text(range);
  std::vector<Splice> splices;
  std::vector<const clang::Stmt*> parents;
  collect(root, parents, splices);
  if (splices.empty()) return text;
  std::sort(splices.begin(), splices.end(), [](const Splice& a, const Splice& b) { return a.begin < b.begin; });
  const unsigned base = cx_.src.offset(range.getBegin());
  std::string out;
  unsigned pos = 0;
  for (const Splice& s : splices) {
    if (s.begin < base + pos || s.end > base + text.size()) continue;  // outside: cannot happen for real nodes
    out += text.substr(pos, s.begin - base - pos);
    out += s.text;
    pos = s.end - base;
  }
  return out + text.substr(pos);
}

bool ExprPrinter::addSplice(const clang::Stmt* node, clang::SourceRange range, std::string text,
                            std::vector<Splice>& out) {
  auto file_range = cx_.src.fileRange(range);
  if (!file_range) {
    cx_.diags.report(Diag::InsideMacro, node->getBeginLoc(), {"this code"});
    return false;
  }
  out.push_back({cx_.src.offset(file_range->getBegin()), cx_.src.offset(file_range->getEnd()), std::move(text)});
  return true;
}

void ExprPrinter::collect(const clang::Stmt* s, std::vector<const clang::Stmt*>& parents, std::vector<Splice>& out) {
  if (!s) return;
  if (const auto* lambda = llvm::dyn_cast<clang::LambdaExpr>(s)) {
    if (auto body = cx_.convert_lambda(lambda)) {
      const clang::SourceRange braces = lambda->getBody()->getSourceRange();
      if (SourceText::editable(braces.getBegin()) && SourceText::editable(braces.getEnd()))
        addSplice(lambda->getBody(), braces, *body, out);
      else
        cx_.diags.report(Diag::InsideMacro, lambda->getBeginLoc(), {"this lambda's body"});
    }
    return;
  }
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) {
    const bool is_logical = (llvm::isa<clang::BinaryOperator>(e) && llvm::cast<clang::BinaryOperator>(e)->isLogicalOp()) ||
                            (llvm::isa<clang::UnaryOperator>(e) &&
                             llvm::cast<clang::UnaryOperator>(e)->getOpcode() == clang::UO_LNot);
    const bool is_conditional = llvm::isa<clang::ConditionalOperator>(e);
    if ((is_logical || is_conditional) && isTensorCondition(e) &&
        (usedAsTensor(parents) || (is_conditional && isTensorType(e->getType())))) {
      if (!convertible(e)) return;
      std::optional<std::string> converted =
          is_logical ? convertLogicalExpression(*this, e) : convertConditionalExpression(*this, e);
      if (converted) {
        addSplice(e, e->getSourceRange(), *converted, out);
        return;
      }
    }
  }
  parents.push_back(s);
  for (const clang::Stmt* child : s->children()) collect(child, parents, out);
  parents.pop_back();
}

}  // namespace ag::rewriter
