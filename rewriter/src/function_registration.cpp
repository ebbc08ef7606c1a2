// Registers a converted free function's name and parameter names with the runtime, so that
// signatures and retrace logs say `collatz(n: ...)` instead of `arg0` (docs/operators.md).
#include "function_registration.h"

#include <clang/AST/DeclCXX.h>
#include <fmt/format.h>

#include "context.h"
#include "templates.h"

namespace ag::rewriter {

std::optional<std::string> registrationFor(const clang::FunctionDecl* fn, const SourceText& src) {
  if (llvm::isa<clang::CXXMethodDecl>(fn) || fn->getDescribedFunctionTemplate() || fn->isTemplated() ||
      fn->isMain() || fn->isVariadic() || !fn->getDeclName().isIdentifier() || fn->isDeleted())
    return std::nullopt;
  std::string callee = fn->getName().str();
  if (fn->getQualifierLoc()) {
    auto qualifier = src.fileRange(fn->getQualifierLoc().getSourceRange());
    if (!qualifier) return std::nullopt;
    callee = src.text(*qualifier) + callee;
  }
  std::vector<std::string> params;
  for (unsigned i = 0; i < fn->getNumParams(); ++i) {
    const clang::ParmVarDecl* p = fn->getParamDecl(i);
    params.push_back(quoted(p->getName().empty() ? fmt::format("arg{}", i) : p->getName().str()));
  }
  std::string joined;
  for (const std::string& p : params) joined += (joined.empty() ? "" : ", ") + p;
  clang::PrintingPolicy policy(src.context().getLangOpts());
  policy.SuppressTagKeyword = true;
  const std::string type = src.context().getPointerType(fn->getType()).getAsString(policy);
  return fmt::format(tmpl::kRegister, fmt::arg("var", fmt::format("ag__info_{}_{}", fn->getName().str(), src.line(fn->getLocation()))),
                     fmt::arg("type", type), fmt::arg("fn", callee), fmt::arg("name", quoted(fn->getNameAsString())),
                     fmt::arg("params", joined));
}

}  // namespace ag::rewriter
