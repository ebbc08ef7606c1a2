// Backward liveness over the statement tree (see liveness.h): per statement, what it reads and
// what it overwrites whole; loops to a fixpoint; switch and try blocks conservatively.
#include "liveness.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>

#include <algorithm>

namespace ag::rewriter {
namespace {

using Vars = Liveness::Vars;

const clang::Expr* strip(const clang::Expr* e) {
  while (true) {
    e = e->IgnoreParenImpCasts();
    if (const auto* c = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = c->getSubExpr();
    else if (const auto* m = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) e = m->getSubExpr();
    else if (const auto* b = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(e)) e = b->getSubExpr();
    else return e;
  }
}

// The variable an lvalue is rooted at: x, s.h, arr[0], v[i] -> x, s, arr, v.
const clang::ValueDecl* rootOf(const clang::Expr* e) {
  e = strip(e);
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) return ref->getDecl();
  if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) return member->isArrow() ? nullptr : rootOf(member->getBase());
  if (const auto* sub = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) return rootOf(sub->getBase());
  if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); op && op->getOperator() == clang::OO_Subscript)
    return rootOf(op->getArg(0));
  return nullptr;
}

// A whole-variable assignment `x = e;` (builtin or operator=): the statement overwrites x.
const clang::ValueDecl* assignedWhole(const clang::Expr* e) {
  e = strip(e);
  const clang::Expr* lhs = nullptr;
  if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(e); bin && bin->getOpcode() == clang::BO_Assign)
    lhs = bin->getLHS();
  if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); op && op->getOperator() == clang::OO_Equal)
    lhs = op->getArg(0);
  if (!lhs) return nullptr;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(lhs))) return ref->getDecl();
  return nullptr;
}

// Every variable a statement mentions, except the target of a top-level `x = e`.
class Uses : public clang::RecursiveASTVisitor<Uses> {
 public:
  explicit Uses(const clang::Expr* skip_target) : skip_(skip_target) {}
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (ref != skip_) vars.insert(ref->getDecl());
    return true;
  }
  Vars vars;

 private:
  const clang::Expr* skip_;
};

// The statement's (reads, whole overwrites).
std::pair<Vars, Vars> usesAndKills(const clang::Stmt* s) {
  Vars kills;
  const clang::Expr* skip = nullptr;
  if (const auto* decl = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* d : decl->decls())
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(d)) kills.insert(var);
  } else if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) {
    if (const clang::ValueDecl* v = assignedWhole(e)) {
      kills.insert(v);
      const clang::Expr* x = strip(e);
      const clang::Expr* lhs = llvm::isa<clang::BinaryOperator>(x) ? llvm::cast<clang::BinaryOperator>(x)->getLHS()
                                                                    : llvm::cast<clang::CXXOperatorCallExpr>(x)->getArg(0);
      skip = strip(lhs);
    }
  }
  Uses uses(skip);
  uses.TraverseStmt(const_cast<clang::Stmt*>(s));
  return {std::move(uses.vars), std::move(kills)};
}

Vars transfer(const clang::Stmt* s, Vars live) {
  if (!s) return live;
  auto [uses, kills] = usesAndKills(s);
  for (const clang::ValueDecl* k : kills) live.erase(k);
  live.insert(uses.begin(), uses.end());
  return live;
}

Vars uses(const clang::Stmt* s) { return transfer(s, {}); }

Vars& add(Vars& into, const Vars& more) {
  into.insert(more.begin(), more.end());
  return into;
}

// The variables the analyzed body declares, and those it can only treat as always live.
class Escapes : public clang::RecursiveASTVisitor<Escapes> {
 public:
  bool VisitVarDecl(clang::VarDecl* v) {
    declared.insert(v);
    if (v->getType()->isReferenceType() && v->getInit())
      if (const clang::ValueDecl* root = rootOf(v->getInit())) escaping.insert(root);
    return true;
  }
  bool VisitBindingDecl(clang::BindingDecl* b) {
    declared.insert(b);
    escaping.insert(b);  // a binding may alias its decomposed object
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->getOpcode() == clang::UO_AddrOf)
      if (const clang::ValueDecl* root = rootOf(op->getSubExpr())) escaping.insert(root);
    return true;
  }
  bool TraverseLambdaExpr(clang::LambdaExpr* lambda) {
    // Whatever a lambda mentions may be read or written whenever it is called.
    Uses inside(nullptr);
    inside.TraverseStmt(lambda->getBody());
    escaping.insert(inside.vars.begin(), inside.vars.end());
    return clang::RecursiveASTVisitor<Escapes>::TraverseLambdaExpr(lambda);
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    // A non-const reference argument: the callee may keep it (and writes it without a kill).
    const clang::FunctionDecl* fn = call->getDirectCallee();
    if (!fn) {
      for (const clang::Expr* a : call->arguments())
        if (const clang::ValueDecl* root = rootOf(a)) escaping.insert(root);
      return true;
    }
    const unsigned first = llvm::isa<clang::CXXOperatorCallExpr>(call) && llvm::isa<clang::CXXMethodDecl>(fn) ? 1 : 0;
    for (unsigned i = first; i < call->getNumArgs() && i - first < fn->getNumParams(); ++i) {
      const clang::QualType t = fn->getParamDecl(i - first)->getType();
      if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified())
        if (const clang::ValueDecl* root = rootOf(call->getArg(i))) escaping.insert(root);
    }
    return true;
  }
  bool VisitGotoStmt(clang::GotoStmt*) { return (has_goto = true); }
  bool VisitIndirectGotoStmt(clang::IndirectGotoStmt*) { return (has_goto = true); }
  bool VisitLabelStmt(clang::LabelStmt*) { return (has_goto = true); }

  Vars declared, escaping;
  bool has_goto = false;
};

}  // namespace

Liveness::Liveness(const clang::FunctionDecl* fn, const StmtNode* body, WrittenIn written_in)
    : written_in_(std::move(written_in)) {
  if (!body || !body->stmt) {
    give_up_ = true;
    return;
  }
  Escapes e;
  e.TraverseStmt(const_cast<clang::Stmt*>(body->stmt));
  give_up_ = e.has_goto;
  escaping_ = std::move(e.escaping);
  // Only the body's own variables and its by-value parameters are analyzed: anything else
  // (captures of a lambda, reference parameters, members, globals) is visible outside it.
  locals_ = std::move(e.declared);
  for (const clang::ParmVarDecl* p : fn->parameters())
    if (!p->getType()->isReferenceType()) locals_.insert(p);
  if (!give_up_) before(body, {}, nullptr);
}

bool Liveness::live(const StmtNode* construct, const clang::ValueDecl* root) const {
  if (give_up_ || !root || !locals_.count(root) || escaping_.count(root)) return true;
  auto it = live_.find(construct);
  return it == live_.end() || it->second.count(root) > 0;
}

Liveness::Vars Liveness::conservative(const StmtNode* n, const Vars& after) {
  Vars live = after;
  add(live, uses(n->stmt));
  return live;
}

Liveness::Vars Liveness::before(const StmtNode* n, const Vars& after, const Loop* loop) {
  if (!n) return after;
  switch (n->kind) {
    case NodeKind::Block: {
      Vars live = after;
      for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) live = before(it->get(), live, loop);
      return live;
    }
    case NodeKind::Original:
      if (!n->children.empty()) {  // a macro use spelling several statements
        Vars live = after;
        for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) live = before(it->get(), live, loop);
        return live;
      }
      return transfer(n->stmt, after);
    case NodeKind::Generated: return transfer(n->stmt, after);  // flags are kept whatever their liveness
    case NodeKind::Jump:
      switch (n->jump) {
        case JumpKind::Return: return uses(n->stmt);
        case JumpKind::Break: return loop ? *loop->after : conservative(n, after);
        case JumpKind::Continue: return loop ? *loop->next : conservative(n, after);
      }
      return after;
    case NodeKind::Labeled: return before(n->body.get(), after, loop);
    case NodeKind::If: {
      Vars out = after;
      Vars live = before(n->then_branch.get(), out, loop);
      Vars else_entry = before(n->else_branch.get(), out, loop);
      Vars crossing;  // written by one branch, read first by the other
      for (const clang::ValueDecl* v : written_in_(n->then_branch.get()))
        if (else_entry.count(v) && !out.count(v)) crossing.insert(v);
      for (const clang::ValueDecl* v : written_in_(n->else_branch.get()))
        if (live.count(v) && !out.count(v)) crossing.insert(v);
      if (!crossing.empty()) {
        add(out, crossing);
        live = before(n->then_branch.get(), out, loop);
        else_entry = before(n->else_branch.get(), out, loop);
      }
      live_[n] = out;
      add(live, else_entry);
      add(live, uses(n->cond));
      return n->init ? before(n->init.get(), live, loop) : live;
    }
    case NodeKind::While:
    case NodeKind::For:
    case NodeKind::DoWhile:
    case NodeKind::RangeFor: {
      Vars entry = loop_head(n, after);
      return n->init ? before(n->init.get(), entry, loop) : entry;
    }
    case NodeKind::Switch:
    case NodeKind::Try: {
      // Jumps inside may go to the end of the switch, or to the enclosing loop.
      Vars live = conservative(n, after);
      if (loop) add(add(live, *loop->after), *loop->next);
      for (const StmtNode* part : {n->init.get()})
        if (part) live = before(part, live, loop);
      return live;
    }
  }
  return conservative(n, after);
}

// Liveness at the entry of a loop (its init excluded), to a fixpoint; records the variables
// live after it or at its head for the staged-loop state.
Liveness::Vars Liveness::loop_head(const StmtNode* n, const Vars& after) {
  const Vars cond_uses = uses(n->cond);
  Vars head = after;  // before the condition (while, for), or before it after a body (do)
  add(head, cond_uses);
  for (int round = 0;; ++round) {
    Vars next = head;  // where a continue goes
    if (n->kind == NodeKind::For && !n->staged && n->inc) next = transfer(n->inc, head);
    Loop ctx{&after, &next};
    Vars body = before(n->body.get(), next, &ctx);
    if (n->kind == NodeKind::RangeFor && n->loop_var) body.erase(n->loop_var);
    Vars grown = head;
    add(grown, body);
    if (grown == head || round > 64) {
      Vars recorded = after;
      live_[n] = add(recorded, head);
      if (n->kind == NodeKind::DoWhile) return body;  // the body runs first
      if (n->kind == NodeKind::RangeFor) add(head, uses(n->range));
      return head;
    }
    head = std::move(grown);
  }
}

}  // namespace ag::rewriter
