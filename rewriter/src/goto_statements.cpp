// The rule for goto (AutoGraph has none: Python has no goto). A staged body becomes a lambda,
// and so does the rest of a block after a lowered break/continue/return (its guard): a goto
// can only jump within one function body. So a goto is kept exactly when it and its label end
// up in the same lambda after the rewrite (or both outside every lambda): then the jump is
// plain C++ that runs while tracing, deciding which code gets traced, like any C++ branch
// (a jump out of or into a staged body, or across a guard, is an error). This runs after the
// lowering passes, on the statement tree as it will be printed.
#include <clang/AST/Stmt.h>

#include <map>

#include "lowering.h"

namespace ag::rewriter {
namespace {

class GotoChecker {
 public:
  explicit GotoChecker(Context& cx) : cx_(cx) {}

  void walk(const StmtNode* n, const StmtNode* lambda) {
    if (!n) return;
    if (const auto* go = llvm::dyn_cast_or_null<clang::GotoStmt>(n->stmt); go && n->kind == NodeKind::Original)
      gotos_.push_back({go, lambda});
    if (const auto* label = llvm::dyn_cast_or_null<clang::LabelStmt>(n->stmt); label && n->kind == NodeKind::Labeled)
      labels_[label->getDecl()] = lambda;
    // A staged construct's init runs before its operator call, outside its lambdas.
    walk(n->init.get(), lambda);
    const StmtNode* inner = n->staged ? n : lambda;
    for (const auto& c : n->children) walk(c.get(), inner);
    for (const StmtNode* c : {n->then_branch.get(), n->else_branch.get(), n->body.get()}) walk(c, inner);
  }

  void report() {
    for (const auto& [go, lambda] : gotos_) {
      auto it = labels_.find(go->getLabel());
      const StmtNode* label_lambda = it == labels_.end() ? nullptr : it->second;
      if (it == labels_.end() || label_lambda == lambda) continue;  // a label in a nested lambda is the compiler's error
      const StmtNode* crossed = lambda ? lambda : label_lambda;
      if (!crossed->stmt) {  // a generated guard
        cx_.diags.report(Diag::GotoAcrossGuard, go->getBeginLoc());
        continue;
      }
      cx_.diags.report(Diag::GotoInStaged, go->getBeginLoc(), {crossed->kind == NodeKind::If ? "if" : "loop"});
    }
  }

 private:
  Context& cx_;
  std::vector<std::pair<const clang::GotoStmt*, const StmtNode*>> gotos_;
  std::map<const clang::LabelDecl*, const StmtNode*> labels_;
};

}  // namespace

void checkGotoStatements(Context& cx, const FunctionIr& ir) {
  GotoChecker checker(cx);
  checker.walk(ir.body.get(), nullptr);
  checker.report();
}

}  // namespace ag::rewriter
