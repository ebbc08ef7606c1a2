// The text of statements and expressions as the user wrote them, with the pieces inside that
// need converting spliced in: logical and conditional expressions on tensors, and the bodies of
// lambdas that have tensor control flow.
#pragma once

#include <clang/AST/Expr.h>

#include <string>
#include <vector>

#include "context.h"

namespace ag::rewriter {

class ExprPrinter {
 public:
  explicit ExprPrinter(Context& cx) : cx_(cx) {}

  // A statement through its ';'.
  std::string statement(const clang::Stmt* s);
  // An expression in its own context: a logical expression on tensors is converted only where
  // its value becomes an ag::Tensor (where a bool was needed, the original code stays).
  std::string expression(const clang::Expr* e);
  // An expression that a converted construct or operator receives (a condition, an operand of
  // ag::and_): a logical or conditional expression on tensors at its top is converted too.
  std::string operand(const clang::Expr* e);
  // Whether statement(s) differs from the original text (for a statement that is part of a
  // macro use: whether it would need to).
  bool changes(const clang::Stmt* s);
  // Whether a logical or conditional expression on tensors that `e` is can be converted: its
  // operators are spelled in the file (reported as an error otherwise). True for anything else.
  bool convertible(const clang::Expr* e);

  Context& context() { return cx_; }

 private:
  struct Splice {
    unsigned begin, end;
    std::string text;
  };
  std::string spliced(clang::CharSourceRange range, const clang::Stmt* root);
  void collect(const clang::Stmt* s, std::vector<const clang::Stmt*>& parents, std::vector<Splice>& out);
  bool addSplice(const clang::Stmt* node, clang::SourceRange range, std::string text, std::vector<Splice>& out);

  Context& cx_;
};

// Converters of expressions (one file each), used by ExprPrinter. Each returns nullopt when
// `e` is not its construct on tensors.
std::optional<std::string> convertLogicalExpression(ExprPrinter& printer, const clang::Expr* e);
std::optional<std::string> convertConditionalExpression(ExprPrinter& printer, const clang::Expr* e);

}  // namespace ag::rewriter
