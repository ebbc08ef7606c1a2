// The original text of AST nodes: file ranges (a whole macro use counts as its text), lines,
// offsets, and whether a token the rewrite must edit is spelled in the file.
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

  // The characters of the main file that spell the tokens of `range`. An end that is an
  // object-like macro (`y * SCALE`) or an argument of a function-like one extends over the
  // whole macro use; nullopt when the range starts or ends in the middle of a macro's
  // expansion, where no file text spells exactly these tokens (Lexer::makeFileCharRange).
  std::optional<clang::CharSourceRange> fileRange(clang::SourceRange range) const;
  // A statement's file range, extended over its trailing ';'.
  std::optional<clang::CharSourceRange> statementRange(const clang::Stmt* s) const;
  // The file range of statements from range's begin to its end, extended over a trailing ';'.
  std::optional<clang::CharSourceRange> statementRange(clang::SourceRange range) const;
  // Whether the token at `loc` is spelled in the file, so that the rewrite can replace it (a
  // keyword, parenthesis or operator that comes from a macro's expansion cannot be edited).
  static bool editable(clang::SourceLocation loc) { return loc.isValid() && loc.isFileID(); }

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
