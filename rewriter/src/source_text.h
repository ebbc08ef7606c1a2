// The original text of AST nodes: file ranges (refusing macro expansions), lines, offsets.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/Basic/SourceManager.h>

#include <optional>
#include <string>

namespace ag::rewriter {

class SourceText {
 public:
  explicit SourceText(clang::ASTContext& ctx) : ctx_(ctx), sm_(ctx.getSourceManager()) {}

  clang::ASTContext& context() const { return ctx_; }
  const clang::SourceManager& manager() const { return sm_; }

  // The range in the main file that spells `range`. A range that starts or ends inside a
  // macro expansion gives nullopt unless `allow_macro_use` (then a whole macro use counts).
  std::optional<clang::CharSourceRange> fileRange(clang::SourceRange range, bool allow_macro_use = false) const;
  // A statement's range, extended over its trailing ';'.
  std::optional<clang::CharSourceRange> statementRange(const clang::Stmt* s, bool allow_macro_use = true) const;
  // Whether a node is spelled inside a macro expansion.
  bool inMacro(clang::SourceRange range) const;

  std::string text(clang::CharSourceRange range) const;
  // The text of an expression or statement exactly as spelled (macro uses kept whole).
  std::string textOf(const clang::Stmt* s) const;
  unsigned offset(clang::SourceLocation loc) const { return sm_.getFileOffset(sm_.getFileLoc(loc)); }
  unsigned line(clang::SourceLocation loc) const { return sm_.getPresumedLineNumber(sm_.getFileLoc(loc)); }
  unsigned column(clang::SourceLocation loc) const { return sm_.getPresumedColumnNumber(sm_.getFileLoc(loc)); }
  // The whitespace that indents the line holding `loc`.
  std::string indentOf(clang::SourceLocation loc) const;

 private:
  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
};

}  // namespace ag::rewriter
