// Clang statements -> the converters' statement tree, with the build-time errors for what
// cannot be converted (computed goto in a staged body, switch on a tensor, try inside a staged
// construct, construct inside a macro expansion).
#include "ir_builder.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

#include <algorithm>
#include <tuple>

#include "ast_queries.h"
#include "comments.h"
#include "expr_printer.h"

namespace ag::rewriter {
namespace {

class Builder {
 public:
  explicit Builder(Context& cx) : cx_(cx) {}

  FunctionIr run(const clang::CompoundStmt* body) {
    ir_.body = build(body);
    return std::move(ir_);
  }

 private:
  // A construct enclosing the statement being built, innermost last.
  struct Enclosing {
    StmtNode* node;
    bool staged;       // a staged body: code inside it runs in a lambda
    bool breakable;    // loops and switches
    bool continuable;  // loops
    const char* what;  // "if", "while", ... for messages
  };

  unsigned line(const clang::Stmt* s) const { return cx_.src.line(s->getBeginLoc()); }

  const Enclosing* innermostStaged() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it)
      if (it->staged) return &*it;
    return nullptr;
  }

  // A staged construct is replaced by an operator call: its keywords and parentheses (the
  // tokens the rewrite removes) must be spelled in the file, not come from a macro's
  // expansion. Its condition and body may use macros (`while (y < LIMIT) y = y * SCALE;`):
  // they are kept as written, whole macro uses included.
  bool stageable(const clang::Stmt* s, const char* what, std::initializer_list<clang::SourceLocation> tokens) {
    bool ok = cx_.src.statementRange(s).has_value();
    for (clang::SourceLocation t : tokens) ok = ok && (t.isInvalid() || SourceText::editable(t));
    if (ok) return true;
    cx_.diags.report(Diag::InsideMacro, s->getBeginLoc(), {std::string("this tensor-dependent ") + what});
    return false;
  }

  StmtNodePtr build(const clang::Stmt* s) {
    if (!s) return nullptr;
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(s)) return buildBlock(block);
    if (const auto* st = llvm::dyn_cast<clang::IfStmt>(s)) return buildIf(st);
    if (const auto* st = llvm::dyn_cast<clang::WhileStmt>(s))
      return buildLoop(NodeKind::While, st, st->getCond(), st->getBody(), "while", st->getConditionVariable(),
                       {st->getWhileLoc(), st->getLParenLoc(), st->getRParenLoc()});
    if (const auto* st = llvm::dyn_cast<clang::DoStmt>(s))
      return buildLoop(NodeKind::DoWhile, st, st->getCond(), st->getBody(), "do-while", nullptr,
                       {st->getDoLoc(), st->getWhileLoc(), st->getRParenLoc()});
    if (const auto* st = llvm::dyn_cast<clang::ForStmt>(s)) return buildFor(st);
    if (const auto* st = llvm::dyn_cast<clang::CXXForRangeStmt>(s)) return buildRangeFor(st);
    if (llvm::isa<clang::BreakStmt>(s)) return buildJump(s, JumpKind::Break);
    if (llvm::isa<clang::ContinueStmt>(s)) return buildJump(s, JumpKind::Continue);
    if (llvm::isa<clang::ReturnStmt>(s)) return buildJump(s, JumpKind::Return);
    if (const auto* st = llvm::dyn_cast<clang::SwitchStmt>(s)) return buildSwitch(st);
    if (const auto* st = llvm::dyn_cast<clang::CXXTryStmt>(s)) return buildTry(st);
    if (const auto* st = llvm::dyn_cast<clang::SwitchCase>(s)) return buildLabeled(s, st->getSubStmt());
    if (const auto* st = llvm::dyn_cast<clang::LabelStmt>(s)) return buildLabeled(s, st->getSubStmt());
    if (const auto* st = llvm::dyn_cast<clang::AttributedStmt>(s)) return buildLabeled(s, st->getSubStmt());
    // A goto is checked once the lowering is done (checkGotoStatements); a computed goto's
    // target is unknown, so none is accepted inside a staged body.
    if (llvm::isa<clang::IndirectGotoStmt>(s) && innermostStaged()) {
      cx_.diags.report(Diag::GotoInStaged, s->getBeginLoc(), {innermostStaged()->node->kind == NodeKind::If ? "if" : "loop"});
    }
    return std::make_unique<StmtNode>(NodeKind::Original, s, line(s));
  }

  StmtNodePtr buildBlock(const clang::CompoundStmt* block) {
    auto node = std::make_unique<StmtNode>(NodeKind::Block, block, line(block));
    const std::string text = cx_.src.textOf(block);
    const unsigned base = cx_.src.offset(block->getBeginLoc());
    const unsigned base_line = line(block);
    auto line_at = [&](size_t pos) {
      return base_line + static_cast<unsigned>(std::count(text.begin(), text.begin() + pos, '\n'));
    };
    // The gaps between statements hold what belongs to no statement: comments, preprocessor
    // lines, skipped #if branches, macros that expand to nothing. Each statement's file range
    // (whole macro uses included) ends the gap before it and starts the next, so no text is
    // ever emitted both as a statement and as a gap.
    size_t prev_end = 1;  // just after '{'
    StmtNode* prev = nullptr;
    const std::vector<const clang::Stmt*> stmts(block->body_begin(), block->body_end());
    for (size_t i = 0; i < stmts.size(); ++i) {
      StmtNodePtr built = build(stmts[i]);
      std::optional<clang::CharSourceRange> range = cx_.src.statementRange(stmts[i]);
      if (!range) std::tie(built, range, i) = buildMacroGroup(stmts, i, std::move(built));
      if (range) {
        const size_t begin = cx_.src.offset(range->getBegin()) - base;
        if (begin >= prev_end && begin <= text.size())
          attachGapComments(text.substr(prev_end, begin - prev_end), line_at(prev_end), prev, *built);
        prev_end = std::max(prev_end, static_cast<size_t>(cx_.src.offset(range->getEnd()) - base));
      }
      prev = built.get();
      node->children.push_back(std::move(built));
    }
    if (prev_end + 1 <= text.size()) {  // comments between the last statement and '}'
      StmtNode trailing(NodeKind::Generated);
      attachGapComments(text.substr(prev_end, text.size() - 1 - prev_end), line_at(prev_end), prev, trailing);
      node->inner_comment = trailing.comment_before;
      node->inner_comment_line = trailing.comment_line;
    }
    return node;
  }

  // A macro that expands to several statements (`#define STEP a(); b()`): no file text spells
  // one of them alone, so statements first..last (as few as spell a whole macro use) become one
  // node printed as that use. Nothing inside it can be converted (SourceEmitter reports what needs
  // to be). Returns the node, its range (nullopt: no such use, reported) and the index of last.
  std::tuple<StmtNodePtr, std::optional<clang::CharSourceRange>, size_t> buildMacroGroup(
      const std::vector<const clang::Stmt*>& stmts, size_t first, StmtNodePtr first_node) {
    std::optional<clang::CharSourceRange> range;
    size_t last = first + 1;
    for (; last < stmts.size(); ++last) {
      const clang::SourceRange both(stmts[first]->getBeginLoc(), stmts[last]->getEndLoc());
      if ((range = cx_.src.statementRange(both))) break;
    }
    if (!range) {
      cx_.diags.report(Diag::PartOfMacro, stmts[first]->getBeginLoc());
      return {std::move(first_node), std::nullopt, first};
    }
    auto group = std::make_unique<StmtNode>(NodeKind::Original, stmts[first], first_node->line);
    group->text = cx_.src.text(*range);
    group->children.push_back(std::move(first_node));
    for (size_t k = first + 1; k <= last; ++k) group->children.push_back(build(stmts[k]));
    return {std::move(group), range, last};
  }

  StmtNodePtr buildIf(const clang::IfStmt* s) {
    auto node = std::make_unique<StmtNode>(NodeKind::If, s, line(s));
    node->cond = s->getCond();
    node->staged = !s->isConstexpr() && !s->isConsteval() && isTensorCondition(s->getCond()) &&
                   stageable(s, "if", {s->getIfLoc(), s->getLParenLoc(), s->getRParenLoc(), s->getElseLoc()});
    if (node->staged && s->getConditionVariable()) {
      cx_.diags.report(Diag::ConditionVariable, s->getConditionVariable()->getLocation(), {"if"});
      node->staged = false;
    }
    if (s->getInit()) node->init = build(s->getInit());
    stack_.push_back({node.get(), node->staged, false, false, "if"});
    node->then_branch = build(s->getThen());
    node->else_branch = build(s->getElse());
    stack_.pop_back();
    attachBranchComments(cx_.src, s, *node);
    return node;
  }

  StmtNodePtr buildLoop(NodeKind kind, const clang::Stmt* s, const clang::Expr* cond, const clang::Stmt* body,
                    const char* what, const clang::VarDecl* cond_var,
                    std::initializer_list<clang::SourceLocation> tokens) {
    auto node = std::make_unique<StmtNode>(kind, s, line(s));
    node->cond = cond;
    node->staged = cond && isTensorCondition(cond) && stageable(s, what, tokens);
    if (node->staged && cond_var) {
      cx_.diags.report(Diag::ConditionVariable, cond_var->getLocation(), {what});
      node->staged = false;
    }
    stack_.push_back({node.get(), node->staged, true, true, what});
    node->body = build(body);
    stack_.pop_back();
    return node;
  }

  StmtNodePtr buildFor(const clang::ForStmt* s) {
    StmtNodePtr init = s->getInit() ? build(s->getInit()) : nullptr;
    StmtNodePtr node = buildLoop(NodeKind::For, s, s->getCond(), s->getBody(), "for", s->getConditionVariable(),
                             {s->getForLoc(), s->getLParenLoc(), s->getRParenLoc()});
    node->init = std::move(init);
    node->inc = s->getInc();
    if (node->staged && node->inc) stageIncrement(cx_, *node);
    return node;
  }

  StmtNodePtr buildRangeFor(const clang::CXXForRangeStmt* s) {
    auto node = std::make_unique<StmtNode>(NodeKind::RangeFor, s, line(s));
    node->range = s->getRangeInit();
    node->loop_var = s->getLoopVariable();
    node->staged = node->range && isTensorValued(node->range) &&
                   stageable(s, "for", {s->getForLoc(), s->getColonLoc(), s->getRParenLoc()});
    if (s->getInit()) node->init = build(s->getInit());
    stack_.push_back({node.get(), node->staged, true, true, "for"});
    node->body = build(s->getBody());
    stack_.pop_back();
    return node;
  }

  StmtNodePtr buildJump(const clang::Stmt* s, JumpKind kind) {
    auto node = std::make_unique<StmtNode>(NodeKind::Jump, s, line(s));
    node->jump = kind;
    bool crossed = false;
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      const bool is_target = kind == JumpKind::Break ? it->breakable : kind == JumpKind::Continue && it->continuable;
      if (is_target) {
        node->target = it->node;
        node->crosses_staged = crossed;
        if (crossed && it->node->kind == NodeKind::Switch)
          cx_.diags.report(Diag::JumpOutOfSwitch, s->getBeginLoc(), {innermostStaged()->what});
        break;
      }
      crossed = crossed || it->staged;
      if (kind == JumpKind::Return && isLoop(it->node->kind)) node->enclosing_loops.push_back(it->node);
    }
    if (kind == JumpKind::Return) {
      node->crosses_staged = crossed;
      ir_.returns_need_lowering = ir_.returns_need_lowering || crossed;
    }
    ir_.jumps.push_back(node.get());
    return node;
  }

  StmtNodePtr buildSwitch(const clang::SwitchStmt* s) {
    auto node = std::make_unique<StmtNode>(NodeKind::Switch, s, line(s));
    node->cond = s->getCond();
    if (isTensorValued(s->getCond())) cx_.diags.report(Diag::SwitchOnTensor, s->getBeginLoc());
    if (s->getInit()) node->init = build(s->getInit());
    stack_.push_back({node.get(), false, true, false, "switch"});
    node->body = build(s->getBody());
    stack_.pop_back();
    return node;
  }

  StmtNodePtr buildTry(const clang::CXXTryStmt* s) {
    if (const Enclosing* staged = innermostStaged()) cx_.diags.report(Diag::TryInStaged, s->getBeginLoc(), {staged->what});
    auto node = std::make_unique<StmtNode>(NodeKind::Try, s, line(s));
    node->children.push_back(build(s->getTryBlock()));
    for (unsigned i = 0; i < s->getNumHandlers(); ++i) {
      const clang::CXXCatchStmt* handler = s->getHandler(i);
      const unsigned begin = cx_.src.offset(handler->getBeginLoc());
      const unsigned end = cx_.src.offset(handler->getHandlerBlock()->getBeginLoc());
      const std::string text = cx_.src.textOf(handler);
      node->handler_headers.push_back(text.substr(0, end - begin));
      node->children.push_back(build(handler->getHandlerBlock()));
    }
    return node;
  }

  StmtNodePtr buildLabeled(const clang::Stmt* s, const clang::Stmt* sub) {
    auto node = std::make_unique<StmtNode>(NodeKind::Labeled, s, line(s));
    const unsigned begin = cx_.src.offset(s->getBeginLoc());
    const unsigned sub_begin = cx_.src.offset(sub->getBeginLoc());
    node->text = cx_.src.textOf(s).substr(0, sub_begin - begin);
    while (!node->text.empty() && (node->text.back() == ' ' || node->text.back() == '\n')) node->text.pop_back();
    node->body = build(sub);
    return node;
  }

  Context& cx_;
  FunctionIr ir_;
  std::vector<Enclosing> stack_;
};

}  // namespace

FunctionIr buildFunctionIr(Context& cx, const clang::CompoundStmt* body) { return Builder(cx).run(body); }

void stageIncrement(Context& cx, StmtNode& for_loop, const std::string& run_when) {
  auto body = std::make_unique<StmtNode>(NodeKind::Block, nullptr, for_loop.body->line);
  for_loop.iteration = for_loop.body.get();
  body->children.push_back(std::move(for_loop.body));
  ExprPrinter printer(cx);
  const unsigned line = cx.src.line(for_loop.inc->getBeginLoc());
  StmtNodePtr inc = makeGenerated(printer.expression(for_loop.inc) + ";", line);
  inc->stmt = for_loop.inc;
  if (!run_when.empty()) {  // a staged guard: `if (!flags) inc;`
    auto guard = std::make_unique<StmtNode>(NodeKind::If, nullptr, line);
    guard->staged = true;
    guard->cond_text = run_when;
    guard->then_branch = std::move(inc);
    inc = std::move(guard);
  }
  body->children.push_back(std::move(inc));
  for_loop.body = std::move(body);
}

}  // namespace ag::rewriter
