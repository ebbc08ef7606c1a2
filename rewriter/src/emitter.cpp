// Printing of the statement tree: unchanged statements as written, plain control flow around
// converted code, and the shared pieces the staged-statement converters use.
#include "emitter.h"

#include <clang/AST/StmtCXX.h>
#include <fmt/format.h>

#include <algorithm>

#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {
namespace {

constexpr size_t kInlineLambdaLimit = 72;  // a one-statement body this short stays on one line
constexpr size_t kLineLimit = 110;

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

bool SourceEmitter::changed(const StmtNode* n) {
  if (!n) return false;
  if (auto it = changed_.find(n); it != changed_.end()) return it->second;
  bool c = false;
  switch (n->kind) {
    case NodeKind::Original:
      if (!n->children.empty()) {  // a macro use spelling several statements: printed as written
        for (const auto& child : n->children)
          if (changed(child.get())) cx.diags.report(Diag::InsideMacro, child->stmt->getBeginLoc(), {"this statement"});
        break;
      }
      c = printer.changes(n->stmt);
      break;
    case NodeKind::Jump: c = printer.changes(n->stmt); break;  // a native jump: `return a && b;`
    case NodeKind::Generated: c = true; break;
    default:
      c = n->staged || !n->stmt || !n->stop_flags.empty() || !n->break_flag.empty() || !n->continue_flag.empty();
      for (const StmtNode* child : childrenOf(*n)) c = changed(child) || c;
      for (const clang::Expr* e : {n->cond, n->range})
        if (!c && e) c = printer.changes(e);
  }
  changed_[n] = c;
  return c;
}

void SourceEmitter::comments(const std::string& text, unsigned line, int indent) {
  if (text == "\n") return out.line(0, "", line);
  out.lines(indent, text, line);
}

std::string SourceEmitter::originalText(const StmtNode* n) {
  if (n->kind == NodeKind::Original && !n->children.empty()) return n->text;
  auto range = cx.src.statementRange(n->stmt);
  if (!range) {
    cx.diags.report(Diag::PartOfMacro, n->stmt->getBeginLoc());
    return {};
  }
  return cx.src.text(*range);
}

void SourceEmitter::originalStatement(const StmtNode* n, const std::string& text, int indent) {
  unsigned end_line = n->line + static_cast<unsigned>(std::count(text.begin(), text.end(), '\n'));
  if (n->kind != NodeKind::Original || n->children.empty())  // spliced text may have other line breaks
    if (auto range = cx.src.statementRange(n->stmt)) end_line = cx.src.line(range->getEnd());
  out.original(indent, text, n->line, end_line, static_cast<int>(cx.src.indentOf(n->stmt->getBeginLoc()).size()));
}

void SourceEmitter::node(const StmtNode* n, int indent) {
  if (!n) return;
  if (!n->comment_before.empty()) comments(n->comment_before, n->comment_line, indent);
  if (n->stmt && !changed(n)) {
    originalStatement(n, originalText(n), indent);
  } else {
    // A staged loop carries the variables declared before it, so a branch inside it may be the
    // first to give one a value (the loop starts it at zeros of that type).
    const bool staged_loop = n->staged && isLoop(n->kind) && n->stmt;
    if (staged_loop) checks.enterStagedLoop(n->stmt);
    switch (n->kind) {
      case NodeKind::Block: block(n, indent); break;
      case NodeKind::Original:
      case NodeKind::Jump: originalStatement(n, printer.statement(n->stmt), indent); break;
      case NodeKind::Generated: out.lines(indent, n->text, n->line); break;
      case NodeKind::If: n->staged ? emitIfStatement(*this, *n, indent) : plainIf(n, indent, ""); break;
      case NodeKind::While: n->staged ? emitWhileStatement(*this, *n, indent) : plainLoop(n, indent); break;
      case NodeKind::DoWhile: n->staged ? emitDoWhileStatement(*this, *n, indent) : plainLoop(n, indent); break;
      case NodeKind::For: n->staged ? emitForStatement(*this, *n, indent) : plainLoop(n, indent); break;
      case NodeKind::RangeFor: n->staged ? emitRangeForStatement(*this, *n, indent) : plainLoop(n, indent); break;
      case NodeKind::Labeled: labeled(n, indent); break;
      case NodeKind::Switch: switchStatement(n, indent); break;
      case NodeKind::Try: tryStatement(n, indent); break;
    }
    if (staged_loop) checks.exitStagedLoop();
  }
  if (!n->comment_after.empty()) out.append("  " + n->comment_after);
}

void SourceEmitter::statements(const StmtNode* n, int indent) {
  if (!n) return;
  if (n->kind != NodeKind::Block) return node(n, indent);
  for (const auto& child : n->children) node(child.get(), indent);
  if (!n->inner_comment.empty()) comments(n->inner_comment, n->inner_comment_line, indent);
}

void SourceEmitter::block(const StmtNode* n, int indent) {
  out.line(indent, "{", n->line);
  statements(n, indent + 2);
  const auto* compound = llvm::dyn_cast_or_null<clang::CompoundStmt>(n->stmt);
  out.line(indent, "}", compound ? cx.src.line(compound->getRBracLoc()) : 0);
}

void SourceEmitter::lambda(const StmtNode* body, int indent, const std::string& param, const std::vector<std::string>& prelude,
                     unsigned param_line) {
  const std::string open = param.empty() ? fmt::format(tmpl::kLambdaOpen) : fmt::format(tmpl::kParamLambdaOpen, fmt::arg("param", param));
  const StmtNode* only = body;
  if (body && body->kind == NodeKind::Block) {
    if (body->children.empty() && body->inner_comment.empty() && prelude.empty())
      return out.line(indent, param.empty() ? fmt::format(tmpl::kEmptyLambda) : open + "},", param.empty() ? 0 : param_line);
    only = body->children.size() == 1 && body->inner_comment.empty() ? body->children[0].get() : nullptr;
  }
  if (!body && prelude.empty()) return out.line(indent, fmt::format(tmpl::kEmptyLambda));
  const bool inlinable = only && prelude.empty() && only->comment_before.empty() && only->comment_after.empty() &&
                         ((only->stmt && !changed(only)) || only->kind == NodeKind::Generated);
  if (inlinable) {
    const std::string text = only->kind == NodeKind::Generated ? only->text : originalText(only);
    // The statement keeps its original line (a #line goes before it when the lambda's line
    // is not that line): what it calls records std::source_location::current().
    if (text.find('\n') == std::string::npos && text.size() <= kInlineLambdaLimit)
      return out.line(indent, open + " " + text + " },", only->line);
  }
  out.line(indent, open, param.empty() ? 0 : param_line);
  for (const std::string& p : prelude) out.line(indent + 2, p);
  statements(body, indent + 2);
  out.line(indent, fmt::format(tmpl::kLambdaClose));
}

std::vector<StateVar> SourceEmitter::state(const StmtNode& construct, const std::vector<const StmtNode*>& parts,
                                     const std::vector<const clang::Expr*>& exprs, const char* what,
                                     const clang::ValueDecl* declared_inside) {
  std::vector<StateVar> vars = analysis.stateOf(parts, exprs, declared_inside);
  std::erase_if(vars, [&](const StateVar& v) { return v.root && !liveness.live(&construct, v.root); });
  if (construct.stmt) {
    Effects effects;
    for (const StmtNode* p : parts) effects.merge(analysis.ofNode(p));
    if (declared_inside) effects.declared.insert(declared_inside);
    checks.checkNonTensor(vars, what);
    checks.checkAddressTaken(effects, what);
  }
  return vars;
}

void SourceEmitter::stateTail(const std::vector<StateVar>& vars, unsigned line, int indent) {
  std::vector<std::string> exprs, names;
  for (const StateVar& v : vars) exprs.push_back(v.expr), names.push_back(quoted(v.name));
  const std::string loc = cx.sourceLoc(line);
  std::string text = fmt::format(tmpl::kStateTail, fmt::arg("vars", join(exprs)), fmt::arg("names", join(names)),
                                 fmt::arg("loc", loc));
  if (static_cast<size_t>(indent) + text.size() <= kLineLimit) return out.line(indent, text);
  out.line(indent, "ag::state(" + join(exprs) + "),");
  out.line(indent, "{" + join(names) + "},");
  out.line(indent, loc + ");");
}

std::string SourceEmitter::loopCondition(const StmtNode& loop) {
  const std::string cond = loop.cond ? printer.operand(loop.cond) : "true";
  if (loop.stop_flags.empty()) return cond;
  return fmt::format(tmpl::kStagedLoopCond, fmt::arg("not_flags", notFlags(loop.stop_flags)), fmt::arg("cond", cond),
                     fmt::arg("loc", cx.sourceLoc(loop.line)));
}

std::vector<std::string> SourceEmitter::iterationPrelude(const StmtNode& loop) const {
  if (loop.continue_flag.empty()) return {};
  return {fmt::format(tmpl::kFlagDecl, fmt::arg("flag", loop.continue_flag))};
}

void SourceEmitter::breakFlagDeclaration(const StmtNode& loop, int indent) {
  if (!loop.break_flag.empty()) out.line(indent, fmt::format(tmpl::kFlagDecl, fmt::arg("flag", loop.break_flag)));
}

}  // namespace ag::rewriter
