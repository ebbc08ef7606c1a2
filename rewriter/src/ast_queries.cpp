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

bool hasMarker(const clang::Decl* d, llvm::StringRef marker = "ag_function") {
  for (const auto* attr : d->specific_attrs<clang::AnnotateAttr>())
    if (attr->getAnnotation() == marker) return true;
  return false;
}

}  // namespace

bool isTensorType(clang::QualType type) { return isAgRecord(type, "Tensor"); }
bool isTensorArrayType(clang::QualType type) { return isAgRecord(type, "TensorArray"); }
bool isVariableType(clang::QualType type) { return isAgRecord(type, "Variable"); }

bool isTensorContainerType(clang::QualType type) {
  if (type.isNull()) return false;
  type = type.getNonReferenceType().getCanonicalType();
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(type->getAsCXXRecordDecl());
  if (!spec || !spec->isInStdNamespace() || spec->getTemplateArgs().size() < 1) return false;
  const clang::TemplateArgument& elem = spec->getTemplateArgs()[0];
  if (elem.getKind() != clang::TemplateArgument::Type) return false;
  if (spec->getName() == "array") return isTensorType(elem.getAsType()) || isTensorArrayType(elem.getAsType());
  if (spec->getName() == "vector") return isTensorType(elem.getAsType());
  return false;
}

const clang::CXXRecordDecl* tensorStruct(clang::QualType type) {
  if (type.isNull()) return nullptr;
  type = type.getNonReferenceType().getCanonicalType();
  const clang::CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record || !record->hasDefinition() || record->isDependentContext() || !record->isAggregate() ||
      record->isUnion() || record->isInStdNamespace() || record->field_empty() || record->getNumBases() > 0)
    return nullptr;
  for (const clang::FieldDecl* f : record->fields()) {
    const clang::QualType t = f->getType();
    if (f->getAccess() != clang::AS_public || f->isBitField() || t->isReferenceType() || t.isConstQualified())
      return nullptr;
    if (!isTensorType(t) && !isTensorArrayType(t) && !isTensorContainerType(t) && !tensorStruct(t)) return nullptr;
  }
  return record;
}

bool isCarriableType(clang::QualType type) {
  return !type.isNull() && (type->isDependentType() || isTensorType(type) || isTensorArrayType(type) ||
                            isTensorContainerType(type) || tensorStruct(type));
}

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

namespace {

// `marker` on any declaration of `fd`, of its template, or of its pattern.
bool markedWith(const clang::FunctionDecl* fd, llvm::StringRef marker) {
  for (const clang::FunctionDecl* redecl : fd->redecls())
    if (hasMarker(redecl, marker)) return true;
  if (const clang::FunctionTemplateDecl* tmpl = fd->getDescribedFunctionTemplate())
    for (const clang::RedeclarableTemplateDecl* redecl : tmpl->redecls())
      if (hasMarker(redecl->getTemplatedDecl(), marker) || hasMarker(redecl, marker)) return true;
  // A member of a class template: the marker sits on the member's pattern.
  if (const clang::FunctionDecl* pattern = fd->getTemplateInstantiationPattern(); pattern && pattern != fd)
    return markedWith(pattern, marker);
  return false;
}

}  // namespace

bool isMarkedFunction(const clang::FunctionDecl* fd) {
  return markedWith(fd, "ag_function") && !isDoNotConvert(fd);
}

bool isDoNotConvert(const clang::FunctionDecl* fd) { return markedWith(fd, "ag_do_not_convert"); }

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
