// Tensor-type and AG_FUNCTION queries on Clang's AST.
#include "ast_queries.h"

#include <clang/AST/Attr.h>
#include <clang/AST/StmtCXX.h>

namespace ag::rewriter {
namespace {

bool isAgRecord(clang::QualType type, llvm::StringRef name) {
  if (type.isNull()) return false;
  type = type.getNonReferenceType().getCanonicalType();
  const auto* record = type->getAsCXXRecordDecl();
  if (!record || record->getName() != name) return false;
  const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(record->getDeclContext()->getRedeclContext());
  return ns && ns->getName() == "ag" && ns->getParent()->getRedeclContext()->isTranslationUnit();
}

bool hasMarker(const clang::Decl* d) {
  for (const auto* attr : d->specific_attrs<clang::AnnotateAttr>())
    if (attr->getAnnotation() == "ag_function") return true;
  return false;
}

}  // namespace

bool isTensorType(clang::QualType type) { return isAgRecord(type, "Tensor"); }
bool isTensorArrayType(clang::QualType type) { return isAgRecord(type, "TensorArray"); }
bool isVariableType(clang::QualType type) { return isAgRecord(type, "Variable"); }

const clang::Expr* stripImplicit(const clang::Expr* e) {
  while (e) {
    const clang::Expr* next = e->IgnoreUnlessSpelledInSource()->IgnoreParens();
    if (next == e) break;
    e = next;
  }
  return e;
}

bool isTensorValued(const clang::Expr* e) {
  e = stripImplicit(e);
  return e && (e->isTypeDependent() || isTensorType(e->getType()));
}

bool isTensorCondition(const clang::Expr* e) {
  e = stripImplicit(e);
  if (!e) return false;
  if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(e); bin && bin->isLogicalOp())
    return isTensorCondition(bin->getLHS()) || isTensorCondition(bin->getRHS());
  if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(e); un && un->getOpcode() == clang::UO_LNot)
    return isTensorCondition(un->getSubExpr());
  if (const auto* cond = llvm::dyn_cast<clang::ConditionalOperator>(e))
    return isTensorCondition(cond->getCond()) || isTensorValued(e);
  return isTensorValued(e);
}

bool isMarkedFunction(const clang::FunctionDecl* fd) {
  for (const clang::FunctionDecl* redecl : fd->redecls())
    if (hasMarker(redecl)) return true;
  if (const clang::FunctionTemplateDecl* tmpl = fd->getDescribedFunctionTemplate())
    for (const clang::RedeclarableTemplateDecl* redecl : tmpl->redecls())
      if (hasMarker(redecl->getTemplatedDecl()) || hasMarker(redecl)) return true;
  // A member of a class template: the marker sits on the member's pattern.
  if (const clang::FunctionDecl* pattern = fd->getTemplateInstantiationPattern(); pattern && pattern != fd)
    return isMarkedFunction(pattern);
  return false;
}

}  // namespace ag::rewriter

namespace ag::rewriter {

bool hasTensorControlFlow(const clang::Stmt* s) {
  if (!s) return false;
  const clang::Expr* cond = nullptr;
  if (const auto* st = llvm::dyn_cast<clang::IfStmt>(s)) cond = st->isConstexpr() ? nullptr : st->getCond();
  else if (const auto* st = llvm::dyn_cast<clang::WhileStmt>(s)) cond = st->getCond();
  else if (const auto* st = llvm::dyn_cast<clang::DoStmt>(s)) cond = st->getCond();
  else if (const auto* st = llvm::dyn_cast<clang::ForStmt>(s)) cond = st->getCond();
  else if (const auto* st = llvm::dyn_cast<clang::ConditionalOperator>(s)) cond = st->getCond();
  if (cond && isTensorCondition(cond)) return true;
  if (const auto* st = llvm::dyn_cast<clang::CXXForRangeStmt>(s); st && st->getRangeInit() && isTensorValued(st->getRangeInit()))
    return true;
  if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(s); bin && bin->isLogicalOp() && isTensorCondition(bin))
    return true;
  if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(s); un && un->getOpcode() == clang::UO_LNot && isTensorCondition(un->getSubExpr()))
    return true;
  for (const clang::Stmt* child : s->children())
    if (hasTensorControlFlow(child)) return true;
  return false;
}

}  // namespace ag::rewriter
