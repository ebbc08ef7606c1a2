// Original-text queries over the SourceManager.
#include "source_text.h"

#include <clang/AST/Stmt.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/Transformer/SourceCode.h>

namespace ag::rewriter {

std::optional<clang::CharSourceRange> SourceText::fileRange(clang::SourceRange range) const {
  if (range.isInvalid()) return std::nullopt;
  return clang::tooling::getFileRange(clang::CharSourceRange::getTokenRange(range), sm_, ctx_.getLangOpts(),
                                      /*IncludeMacroExpansion=*/true);
}

std::optional<clang::CharSourceRange> SourceText::statementRange(const clang::Stmt* s) const {
  // A declaration's range ends at its own ';' already: extending it would take the next ';'
  // too, the empty condition of `for (int i = 0;; ++i)`.
  clang::CharSourceRange extended = llvm::isa<clang::DeclStmt>(s)
                                        ? clang::CharSourceRange::getTokenRange(s->getSourceRange())
                                        : clang::tooling::getExtendedRange(*s, clang::tok::semi, ctx_);
  return clang::tooling::getFileRange(extended, sm_, ctx_.getLangOpts(), /*IncludeMacroExpansion=*/true);
}

std::optional<clang::CharSourceRange> SourceText::statementRange(clang::SourceRange range) const {
  clang::CharSourceRange extended =
      clang::tooling::maybeExtendRange(clang::CharSourceRange::getTokenRange(range), clang::tok::semi, ctx_);
  return clang::tooling::getFileRange(extended, sm_, ctx_.getLangOpts(), /*IncludeMacroExpansion=*/true);
}

std::string SourceText::text(clang::CharSourceRange range) const {
  return clang::Lexer::getSourceText(range, sm_, ctx_.getLangOpts()).str();
}

std::string SourceText::textOf(const clang::Stmt* s) const {
  auto range = fileRange(s->getSourceRange());
  return range ? text(*range) : std::string();
}

std::string SourceText::indentOf(clang::SourceLocation loc) const {
  loc = sm_.getFileLoc(loc);
  auto [file, offset] = sm_.getDecomposedLoc(loc);
  llvm::StringRef buffer = sm_.getBufferData(file);
  size_t start = buffer.rfind('\n', offset);
  start = start == llvm::StringRef::npos ? 0 : start + 1;
  size_t end = start;
  while (end < buffer.size() && (buffer[end] == ' ' || buffer[end] == '\t')) ++end;
  return buffer.substr(start, end - start).str();
}

}  // namespace ag::rewriter
