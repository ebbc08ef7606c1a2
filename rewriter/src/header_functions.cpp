// Walks the declarations of the user's headers (not their bodies, not system headers) for
// marked functions with tensor control flow defined outside the main file.
#include "header_functions.h"

#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/SourceManager.h>

#include "ast_queries.h"

namespace ag::rewriter {
namespace {

void walk(const clang::DeclContext* dc, const clang::SourceManager& sm, Diagnostics& diags) {
  for (const clang::Decl* d : dc->decls()) {
    const clang::SourceLocation loc = d->getLocation();
    if (loc.isInvalid() || sm.isInSystemHeader(loc)) continue;
    if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) d = tmpl->getTemplatedDecl();
    if (const auto* tmpl = llvm::dyn_cast<clang::ClassTemplateDecl>(d)) d = tmpl->getTemplatedDecl();
    if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(d)) {
      if (fn->hasAttrs() && fn->doesThisDeclarationHaveABody() && !sm.isInMainFile(sm.getExpansionLoc(loc)) &&
          isMarkedFunction(fn) && hasTensorControlFlow(fn->getBody()))
        diags.report(Diag::MarkedInHeader, fn->getLocation(), {fn->getNameAsString()});
    } else if (llvm::isa<clang::NamespaceDecl, clang::CXXRecordDecl, clang::LinkageSpecDecl>(d)) {
      walk(llvm::cast<clang::DeclContext>(d), sm, diags);
    }
  }
}

}  // namespace

void warnMarkedFunctionsInHeaders(clang::ASTContext& ctx, Diagnostics& diags) {
  walk(ctx.getTranslationUnitDecl(), ctx.getSourceManager(), diags);
}

}  // namespace ag::rewriter
