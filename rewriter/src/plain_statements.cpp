// Plain C++ control flow (conditions of C++ types) around converted code: printed as C++,
// with the flags of lowered jumps in loop conditions (ag::loop_flag) where they apply.
#include <clang/AST/StmtCXX.h>
#include <fmt/format.h>

#include "emitter.h"
#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {
namespace {

// `if (...)` / `while (...)`: the original text from the keyword through ')'.
std::string header(const SourceText& src, clang::SourceLocation begin, clang::SourceLocation rparen) {
  return src.text(clang::CharSourceRange::getTokenRange(begin, rparen));
}

const clang::Stmt* loopBody(const clang::Stmt* s) {
  if (const auto* w = llvm::dyn_cast<clang::WhileStmt>(s)) return w->getBody();
  if (const auto* f = llvm::dyn_cast<clang::ForStmt>(s)) return f->getBody();
  if (const auto* r = llvm::dyn_cast<clang::CXXForRangeStmt>(s)) return r->getBody();
  return nullptr;
}

}  // namespace

std::optional<std::string> SourceEmitter::macroHeader(const StmtNode* n, const clang::Stmt* body, bool header_changes) {
  if (SourceText::editable(n->stmt->getBeginLoc()) || !body) return std::nullopt;
  auto whole = cx.src.statementRange(n->stmt);
  auto body_range = cx.src.statementRange(body);
  if (header_changes || !whole || !body_range || !SourceText::editable(body->getBeginLoc())) {
    cx.diags.report(Diag::InsideMacro, n->stmt->getBeginLoc(), {"the header of this statement"});
    return "";
  }
  std::string text = cx.src.text(clang::CharSourceRange::getCharRange(whole->getBegin(), body_range->getBegin()));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  return text;
}

void SourceEmitter::plainIf(const StmtNode* n, int indent, const std::string& prefix) {
  const auto* s = llvm::cast<clang::IfStmt>(n->stmt);
  std::string head;
  if (auto from_macro = macroHeader(n, s->getThen(), n->cond && printer.changes(n->cond))) {
    // `IF_DEBUG { ... }`: the macro use is kept (an `else` from the macro is the error above).
    if (s->getElse()) cx.diags.report(Diag::InsideMacro, n->stmt->getBeginLoc(), {"the header of this statement"});
    head = *from_macro;
  } else if (s->getInit() || s->getConditionVariable() || s->isConstexpr() || s->isConsteval())
    head = header(cx.src, s->getBeginLoc(), s->getRParenLoc());
  else
    head = "if (" + printer.expression(n->cond) + ")";
  out.line(indent, prefix + head + " {", n->line);
  statements(n->then_branch.get(), indent + 2);
  const StmtNode* els = n->else_branch.get();
  if (els && els->kind == NodeKind::If && !els->staged && els->comment_before.empty()) {
    plainIf(els, indent, "} else ");
    return;
  }
  if (els) {
    out.line(indent, "} else {");
    statements(els, indent + 2);
  }
  out.line(indent, "}");
}

void SourceEmitter::plainLoop(const StmtNode* n, int indent) {
  breakFlagDeclaration(*n, indent);
  const std::string not_flags = n->stop_flags.empty() ? std::string() : notFlags(n->stop_flags);
  const std::string loc = cx.sourceLoc(n->line) + (n->plain_reason.empty() ? "" : ", " + quoted(n->plain_reason));
  auto condition = [&](const std::string& cond) {
    if (not_flags.empty()) return cond;
    if (cond.empty()) return fmt::format("ag::loop_flag({}, {})", not_flags, loc);
    return fmt::format(tmpl::kPlainLoopCond, fmt::arg("not_flags", not_flags), fmt::arg("loc", loc), fmt::arg("cond", cond));
  };
  std::vector<std::string> prelude = iterationPrelude(*n);
  if (n->kind == NodeKind::RangeFor && !not_flags.empty())  // a range-for has no condition to test the flags
    prelude.insert(prelude.begin(), fmt::format(tmpl::kPlainRangeForCheck, fmt::arg("not_flags", not_flags), fmt::arg("loc", loc)));

  std::string head;
  const bool header_changes = !not_flags.empty() || (n->cond && printer.changes(n->cond)) ||
                              (n->inc && printer.changes(n->inc)) || (n->init && changed(n->init.get()));
  const std::optional<std::string> from_macro =
      n->kind == NodeKind::DoWhile ? std::nullopt : macroHeader(n, loopBody(n->stmt), header_changes);
  if (from_macro) head = *from_macro;
  else switch (n->kind) {
    case NodeKind::While: {
      const auto* s = llvm::cast<clang::WhileStmt>(n->stmt);
      head = s->getConditionVariable() ? header(cx.src, s->getBeginLoc(), s->getRParenLoc())
                                       : "while (" + condition(printer.expression(n->cond)) + ")";
      break;
    }
    case NodeKind::For: {
      std::string init = n->init ? printer.statement(n->init->stmt) : ";";
      std::string cond = condition(n->cond ? printer.expression(n->cond) : std::string());
      std::string inc = n->inc ? printer.expression(n->inc) : std::string();
      if (!inc.empty() && !n->break_flag.empty())
        inc = fmt::format(tmpl::kPlainLoopIncrement, fmt::arg("not_flags", not_flags), fmt::arg("loc", loc), fmt::arg("inc", inc));
      head = "for (" + init + (cond.empty() ? "" : " " + cond) + ";" + (inc.empty() ? "" : " " + inc) + ")";
      break;
    }
    case NodeKind::RangeFor: {
      const auto* s = llvm::cast<clang::CXXForRangeStmt>(n->stmt);
      head = header(cx.src, s->getBeginLoc(), s->getRParenLoc());
      break;
    }
    case NodeKind::DoWhile: head = "do"; break;
    default: break;
  }
  out.line(indent, head + " {", n->line);
  for (const std::string& p : prelude) out.line(indent + 2, p);
  statements(n->body.get(), indent + 2);
  if (n->kind == NodeKind::DoWhile) {
    const auto* s = llvm::cast<clang::DoStmt>(n->stmt);
    out.line(indent, "} while (" + condition(printer.expression(n->cond)) + ");", cx.src.line(s->getWhileLoc()));
  } else {
    out.line(indent, "}");
  }
}

void SourceEmitter::switchStatement(const StmtNode* n, int indent) {
  const auto* s = llvm::cast<clang::SwitchStmt>(n->stmt);
  auto from_macro = macroHeader(n, s->getBody(), false);
  out.line(indent, (from_macro ? *from_macro : header(cx.src, s->getBeginLoc(), s->getRParenLoc())) + " {", n->line);
  statements(n->body.get(), indent + 2);
  out.line(indent, "}");
}

void SourceEmitter::tryStatement(const StmtNode* n, int indent) {
  out.line(indent, "try {", n->line);
  statements(n->children[0].get(), indent + 2);
  for (size_t i = 1; i < n->children.size(); ++i) {
    out.line(indent, "} " + n->handler_headers[i - 1] + "{", n->children[i]->line);
    statements(n->children[i].get(), indent + 2);
  }
  out.line(indent, "}");
}

void SourceEmitter::labeled(const StmtNode* n, int indent) {
  out.line(indent, n->text, n->line);
  node(n->body.get(), indent + 2);
}

}  // namespace ag::rewriter
