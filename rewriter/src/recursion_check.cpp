// Finds the calls of a converted function to itself that tracing would stage: inside a staged
// if, loop or guard (the rest of a block after a tensor-dependent return, break or continue),
// or in the lazily evaluated operand of a tensor ?:, && or ||.
#include "recursion_check.h"

#include <clang/AST/ExprCXX.h>

#include <optional>
#include <set>

#include "ast_queries.h"

namespace ag::rewriter {
namespace {

// The staged construct around a call: what it is and where, for the error and its note.
struct Staging {
  const char* construct;
  clang::SourceLocation loc;
  bool after_jump = false;  // a guard: the statements after this construct are staged
};

const char* constructName(NodeKind kind) {
  switch (kind) {
    case NodeKind::While: return "while";
    case NodeKind::DoWhile: return "do-while";
    case NodeKind::For:
    case NodeKind::RangeFor: return "for";
    default: return "if";
  }
}

bool hasStaged(const StmtNode* n) {
  if (!n) return false;
  if (n->staged) return true;
  for (const StmtNode* c : childrenOf(*n))
    if (hasStaged(c)) return true;
  return false;
}

// The first statement of the user's code in `n` (a guard's previous sibling may be a block).
const StmtNode* firstOriginal(const StmtNode* n) {
  if (!n) return nullptr;
  if (n->stmt) return n;
  for (const auto& c : n->children)
    if (const StmtNode* found = firstOriginal(c.get())) return found;
  return nullptr;
}

class RecursionFinder {
 public:
  RecursionFinder(Context& cx, const clang::FunctionDecl* fn) : cx_(cx), fn_(fn), canonical_(fn->getCanonicalDecl()) {}

  void node(const StmtNode* n, const std::optional<Staging>& under) {
    if (!n) return;
    switch (n->kind) {
      case NodeKind::Block: return block(n, under);
      case NodeKind::If: {
        node(n->init.get(), under);
        expr(n->cond, under);
        const std::optional<Staging> branches = n->staged && n->stmt ? Staging{"if", n->stmt->getBeginLoc()} : under;
        node(n->then_branch.get(), branches);
        node(n->else_branch.get(), branches);
        return;
      }
      case NodeKind::While:
      case NodeKind::DoWhile:
      case NodeKind::For:
      case NodeKind::RangeFor: {
        const std::optional<Staging> body = n->staged ? Staging{constructName(n->kind), n->stmt->getBeginLoc()} : under;
        node(n->init.get(), under);
        expr(n->cond, under);
        expr(n->range, under);
        expr(n->inc, body);
        node(n->body.get(), body);
        return;
      }
      default:
        // Original statements, jumps (lowered or not, they keep their statement), labels,
        // switches and try blocks: their own expressions, then what they contain.
        if (n->kind != NodeKind::Switch && n->kind != NodeKind::Labeled && n->kind != NodeKind::Try) expr(n->stmt, under);
        if (n->kind == NodeKind::Switch) expr(n->cond, under);
        node(n->init.get(), under);
        node(n->body.get(), under);
        for (const auto& c : n->children) node(c.get(), under);
        return;
    }
  }

 private:
  // A guard (a generated staged if) runs the rest of a block after a statement that may set a
  // return, break or continue flag. It is staged when that statement sets the flag from inside
  // a staged construct (after a plain C++ `if (...) return`, the flag stays a concrete tensor
  // and the guard runs natively).
  void block(const StmtNode* b, const std::optional<Staging>& under) {
    for (size_t i = 0; i < b->children.size(); ++i) {
      const StmtNode* c = b->children[i].get();
      const bool guard = c->kind == NodeKind::If && c->staged && !c->stmt && i > 0 && hasStaged(b->children[i - 1].get());
      const StmtNode* before = guard ? firstOriginal(b->children[i - 1].get()) : nullptr;
      if (!before) {
        node(c, under);
        continue;
      }
      const StmtNode* staged = b->children[i - 1].get();
      const char* construct = staged->stmt ? constructName(staged->kind) : "if";
      node(c->then_branch.get(), Staging{construct, before->stmt->getBeginLoc(), true});
    }
  }

  void expr(const clang::Stmt* s, const std::optional<Staging>& under) {
    if (!s || llvm::isa<clang::LambdaExpr>(s)) return;  // a lambda's body runs when it is called
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s); call && under && callsItselfForever(call))
      report(call, *under);
    if (const auto* cond = llvm::dyn_cast<clang::ConditionalOperator>(s); cond && isTensorCondition(cond->getCond())) {
      expr(cond->getCond(), under);
      const Staging branches{"conditional expression", cond->getQuestionLoc()};
      expr(cond->getTrueExpr(), branches);
      expr(cond->getFalseExpr(), branches);
      return;
    }
    if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(s); bin && bin->isLogicalOp() && isTensorCondition(bin)) {
      expr(bin->getLHS(), under);
      expr(bin->getRHS(), Staging{bin->getOpcode() == clang::BO_LAnd ? "&&" : "||", bin->getOperatorLoc()});
      return;
    }
    for (const clang::Stmt* c : s->children()) expr(c, under);
  }

  // A call of the function itself (on the same object, for a member) whose plain C++ arguments
  // are the caller's parameters, forwarded: tracing it is tracing the caller again, with other
  // symbolic tensors only, so nothing can stop it. Any other C++ argument (`f(x, depth - 1)`)
  // may stop it, and is left to the runtime's trace-depth guard.
  bool callsItselfForever(const clang::CallExpr* call) const {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (!callee) return false;
    if (const clang::FunctionDecl* pattern = callee->getTemplateInstantiationPattern()) callee = pattern;
    if (callee->getCanonicalDecl() != canonical_) return false;
    if (const auto* member = llvm::dyn_cast<clang::CXXMemberCallExpr>(call)) {
      const clang::Expr* object = member->getImplicitObjectArgument();
      if (!object || !llvm::isa<clang::CXXThisExpr>(object->IgnoreParenImpCasts())) return false;
    }
    const unsigned n = std::min(call->getNumArgs(), fn_->getNumParams());
    for (unsigned i = 0; i < n; ++i) {
      const clang::ParmVarDecl* param = fn_->getParamDecl(i);
      if (isCarriableType(param->getType()) || isVariableType(param->getType())) continue;
      if (!unchanged(call->getArg(i), param)) return false;
    }
    return true;
  }

  // Only the parameter itself is the same value at every level: even a constant may differ
  // from what the first call got (`f(x, true)` in a call with `stop == false`) and end it.
  static bool unchanged(const clang::Expr* arg, const clang::ParmVarDecl* param) {
    const auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(stripImplicit(arg));
    return ref && ref->getDecl() == param;
  }

  void report(const clang::CallExpr* call, const Staging& staging) {
    if (!reported_.insert(call).second) return;
    const std::string name = fn_->getNameAsString();
    cx_.diags.report(Diag::RecursionUnderStaged, call->getBeginLoc(), {name, staging.construct});
    cx_.diags.report(staging.after_jump ? Diag::NoteStagedAfterJump : Diag::NoteStagedBy, staging.loc,
                     {staging.construct});
  }

  Context& cx_;
  const clang::FunctionDecl* fn_;  // the definition: its parameters are those the body names
  const clang::FunctionDecl* canonical_;
  std::set<const clang::CallExpr*> reported_;
};

}  // namespace

void checkRecursionUnderStagedControlFlow(Context& cx, const clang::FunctionDecl* fn, const FunctionIr& ir) {
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(fn); method && method->getParent()->isLambda()) return;
  RecursionFinder(cx, fn).node(ir.body.get(), std::nullopt);
}

}  // namespace ag::rewriter
