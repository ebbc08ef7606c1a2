// Finds calls from converted functions to unmarked same-file functions with tensor control flow.
#include "unmarked_callees.h"

#include <clang/AST/Expr.h>

#include <functional>
#include <set>

#include "ast_queries.h"

namespace ag::rewriter {

void warnUnmarkedCallees(const std::vector<const clang::FunctionDecl*>& converted,
                         const std::vector<const clang::FunctionDecl*>& unmarked, Diagnostics& diags) {
  std::set<const clang::FunctionDecl*> suspects;
  for (const clang::FunctionDecl* fn : unmarked)
    if (hasTensorControlFlow(fn->getBody())) suspects.insert(fn->getCanonicalDecl());
  if (suspects.empty()) return;
  for (const clang::FunctionDecl* fn : converted) {
    std::set<const clang::FunctionDecl*> reported;
    std::function<void(const clang::Stmt*)> walk = [&](const clang::Stmt* s) {
      if (!s) return;
      if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s))
        if (const clang::FunctionDecl* callee = call->getDirectCallee()) {
          const clang::FunctionDecl* canonical = callee->getCanonicalDecl();
          if (const clang::FunctionDecl* pattern = callee->getTemplateInstantiationPattern())
            canonical = pattern->getCanonicalDecl();
          if (suspects.count(canonical) && reported.insert(canonical).second) {
            const std::string name = callee->getNameAsString();
            diags.report(Diag::UnmarkedCallee, call->getBeginLoc(), {name});
            const clang::FunctionDecl* def = canonical;
            for (const clang::FunctionDecl* redecl : canonical->redecls())
              if (redecl->doesThisDeclarationHaveABody()) def = redecl;
            std::optional<clang::FixItHint> fixit;
            if (SourceText::editable(def->getBeginLoc()))
              fixit = clang::FixItHint::CreateInsertion(def->getBeginLoc(), "AG_FUNCTION ");
            diags.report(Diag::NoteCalleeHere, def->getLocation(), {name}, fixit);
          }
        }
      for (const clang::Stmt* c : s->children()) walk(c);
    };
    walk(fn->getBody());
  }
}

}  // namespace ag::rewriter
