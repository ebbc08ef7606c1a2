// Comments around converted statements: found in the gaps of the original text.
#include "comments.h"

#include <clang/Lex/Lexer.h>

#include <vector>

namespace ag::rewriter {
namespace {

// The comment lines in the original text between two locations, trimmed ("" when none).
std::string commentsIn(const SourceText& src, clang::SourceLocation begin, clang::SourceLocation end, unsigned& line) {
  if (begin.isInvalid() || end.isInvalid() || begin.isMacroID() || end.isMacroID()) return {};
  const unsigned b = src.offset(begin), e = src.offset(end);
  if (e <= b) return {};
  const std::string text = src.text(clang::CharSourceRange::getCharRange(begin, end));
  std::string out;
  size_t pos = 0;
  line = 0;
  unsigned current = src.line(begin);
  while (pos <= text.size()) {
    size_t stop = text.find('\n', pos);
    std::string l = text.substr(pos, stop == std::string::npos ? std::string::npos : stop - pos);
    const size_t first = l.find_first_not_of(" \t\r"), last = l.find_last_not_of(" \t\r");
    if (first != std::string::npos) {
      if (out.empty()) line = current;
      out += (out.empty() ? "" : "\n") + l.substr(first, last - first + 1);
    }
    if (stop == std::string::npos) break;
    pos = stop + 1;
    ++current;
  }
  return out;
}

// Puts a comment before the first statement of a branch (or before the branch).
void prependTo(StmtNode* branch, const std::string& comment, unsigned line) {
  if (!branch || comment.empty()) return;
  StmtNode* target = branch->kind == NodeKind::Block && !branch->children.empty() ? branch->children[0].get() : branch;
  if (target == branch && branch->kind == NodeKind::Block) {
    branch->inner_comment = comment + (branch->inner_comment.empty() ? "" : "\n" + branch->inner_comment);
    branch->inner_comment_line = line;
    return;
  }
  target->comment_before = comment + (target->comment_before.empty() ? "" : "\n" + target->comment_before);
  target->comment_line = line;
}

// Puts a comment after the last statement of a branch.
void appendTo(StmtNode* branch, const std::string& comment, unsigned line) {
  if (!branch || comment.empty()) return;
  if (branch->kind == NodeKind::Block) {
    if (branch->inner_comment.empty()) branch->inner_comment_line = line;
    branch->inner_comment += (branch->inner_comment.empty() ? "" : "\n") + comment;
    return;
  }
  std::string flat = comment;
  for (char& c : flat)
    if (c == '\n') c = ' ';
  branch->comment_after += (branch->comment_after.empty() ? "" : " ") + flat;
}

}  // namespace

void attachBranchComments(const SourceText& src, const clang::IfStmt* s, StmtNode& node) {
  const clang::SourceManager& sm = src.manager();
  const clang::LangOptions& lang = src.context().getLangOpts();
  unsigned line = 0;
  if (const clang::Stmt* then = s->getThen()) {
    const clang::SourceLocation after_paren = clang::Lexer::getLocForEndOfToken(s->getRParenLoc(), 0, sm, lang);
    const auto then_range = src.statementRange(then);
    if (!then_range) return;
    std::string c = commentsIn(src, after_paren, then_range->getBegin(), line);
    prependTo(node.then_branch.get(), c, line);
    if (const clang::Stmt* els = s->getElse()) {
      c = commentsIn(src, then_range->getEnd(), s->getElseLoc(), line);
      appendTo(node.then_branch.get(), c, line);
      const clang::SourceLocation after_else = clang::Lexer::getLocForEndOfToken(s->getElseLoc(), 0, sm, lang);
      const auto else_range = src.statementRange(els);
      if (!llvm::isa<clang::IfStmt>(els) && else_range)
        prependTo(node.else_branch.get(), commentsIn(src, after_else, else_range->getBegin(), line), line);
    }
  }
}

void attachGapComments(const std::string& gap, unsigned gap_line, StmtNode* prev, StmtNode& next) {
  std::vector<std::string> lines;
  for (size_t pos = 0;;) {
    size_t end = gap.find('\n', pos);
    std::string l = gap.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    const size_t b = l.find_first_not_of(" \t\r"), e = l.find_last_not_of(" \t\r");
    lines.push_back(b == std::string::npos ? std::string() : l.substr(b, e - b + 1));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  size_t first = 0;
  if (prev && lines.size() > 1) {
    if (!lines[0].empty()) prev->comment_after = lines[0];
    first = 1;
  }
  std::string out;
  bool blank = false;
  unsigned out_line = 0;
  for (size_t i = first; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      blank = prev != nullptr || !out.empty();
      continue;
    }
    if (out.empty()) out_line = gap_line + static_cast<unsigned>(i) - (blank ? 1 : 0);
    if (blank) out += out.empty() ? "\n" : "\n\n";
    else if (!out.empty()) out += "\n";
    out += lines[i];
    blank = false;
  }
  if (out.empty() && blank && lines.size() > 2) {
    out = "";  // a blank line alone
    next.comment_before = "\n";
    next.comment_line = gap_line + static_cast<unsigned>(lines.size()) - 2;
    return;
  }
  next.comment_before = out;
  next.comment_line = out_line;
}

}  // namespace ag::rewriter
