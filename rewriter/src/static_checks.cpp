// The static staging-rule warnings: a source-order approximation of "has a value before" and
// "is read after" per local tensor, enough to catch the common mistakes at build time.
#include "static_checks.h"

#include <clang/AST/ExprCXX.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <functional>

#include "ast_queries.h"

namespace ag::rewriter {
namespace {

bool mentions(const clang::Stmt* s, const clang::VarDecl* v) {
  if (!s) return false;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s); ref && ref->getDecl() == v) return true;
  for (const clang::Stmt* c : s->children())
    if (mentions(c, v)) return true;
  return false;
}

const clang::VarDecl* assignedVar(const clang::Expr* lhs) {
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(lhs->IgnoreParenImpCasts()))
    return llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
  return nullptr;
}

bool hasNoValue(const clang::VarDecl* v) {
  if (llvm::isa<clang::ParmVarDecl>(v) || !isTensorType(v->getType()) || v->getType()->isReferenceType()) return false;
  const clang::Expr* init = v->getInit();
  if (!init) return true;
  if (const auto* cleanups = llvm::dyn_cast<clang::ExprWithCleanups>(init)) init = cleanups->getSubExpr();
  const auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(init);
  return construct && construct->getNumArgs() == 0;
}

}  // namespace

StaticChecks::StaticChecks(Context& cx, const clang::Stmt* function_body) : cx_(cx) {
  std::function<void(const clang::Stmt*)> walk = [&](const clang::Stmt* s) {
    if (!s) return;
    const clang::Expr* lhs = nullptr;
    const clang::Expr* rhs = nullptr;
    bool compound = false;
    if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(s); bin && bin->isAssignmentOp())
      lhs = bin->getLHS(), rhs = bin->getRHS(), compound = bin->isCompoundAssignmentOp();
    if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(s); op && op->isAssignmentOp())
      lhs = op->getArg(0), rhs = op->getArg(1), compound = op->getOperator() != clang::OO_Equal;
    if (const clang::VarDecl* v = lhs ? assignedVar(lhs) : nullptr) {
      // x = f(x) and x += 1 read the old value first, then give x a value.
      const unsigned at = cx_.src.offset(lhs->getBeginLoc());
      if (compound || mentions(rhs, v)) refs_[v].push_back({at, false});
      refs_[v].push_back({at, true});
      walk(rhs);
      return;
    }
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s))
      if (const auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) refs_[v].push_back({cx_.src.offset(ref->getBeginLoc()), false});
    for (const clang::Stmt* c : s->children()) walk(c);
  };
  walk(function_body);
  for (auto& [v, refs] : refs_)
    std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {  // a read of x = f(x) comes first
      return a.offset != b.offset ? a.offset < b.offset : !a.write && b.write;
    });
}

const clang::VarDecl* StaticChecks::localTensor(const StateVar& v) {
  const auto* var = llvm::dyn_cast_or_null<clang::VarDecl>(v.root);
  if (!var || v.global || v.expr != var->getName() || !isTensorType(var->getType())) return nullptr;
  return var;
}

bool StaticChecks::hasValueBefore(const clang::VarDecl* v, unsigned offset) const {
  if (!hasNoValue(v)) return true;
  auto it = refs_.find(v);
  if (it == refs_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const Ref& r) { return r.write && r.offset < offset; });
}

bool StaticChecks::usedAfter(const clang::VarDecl* v, unsigned offset) const {
  auto it = refs_.find(v);
  if (it == refs_.end()) return false;
  for (const Ref& r : it->second)
    if (r.offset >= offset) return !r.write;
  return false;
}

void StaticChecks::checkIf(const clang::Stmt* s, const std::vector<StateVar>& state, const Effects& then_effects,
                           const Effects& else_effects) {
  auto range = cx_.src.statementRange(s);
  if (!range) return;
  const unsigned begin = cx_.src.offset(range->getBegin()), end = cx_.src.offset(range->getEnd());
  auto assigns = [](const Effects& e, const StateVar& v) {
    return std::any_of(e.modified.begin(), e.modified.end(), [&](const StateVar& m) { return m.key == v.key; });
  };
  for (const StateVar& v : state) {
    const clang::VarDecl* var = localTensor(v);
    if (!var) continue;
    const bool in_then = assigns(then_effects, v), in_else = assigns(else_effects, v);
    if (in_then == in_else || hasValueBefore(var, begin) || !usedAfter(var, end)) continue;
    const unsigned declared = cx_.src.offset(var->getLocation());
    if (std::any_of(loops_.begin(), loops_.end(), [&](unsigned loop) { return declared < loop; })) continue;
    if (!reported_.insert({var, begin}).second) continue;
    cx_.diags.report(Diag::NoValueAfterIf, s->getBeginLoc(), {v.name, in_then ? "then" : "else"});
    noteWhatToWrite(var, Diag::NoteValueForIf, in_then ? "else" : "then");
  }
}

void StaticChecks::enterStagedLoop(const clang::Stmt* loop) {
  loops_.push_back(cx_.src.offset(loop->getBeginLoc()));
}

// No fix-it: the value a variable must have when a branch does not run is the user's to
// choose (its dtype and shape are not static), so the note says what to write and its caret
// points where: just after the declared name.
void StaticChecks::noteWhatToWrite(const clang::VarDecl* var, Diag note, const char* branch) {
  std::string type = "ag::Tensor";
  if (const clang::TypeSourceInfo* info = var->getTypeSourceInfo())
    if (auto range = cx_.src.fileRange(info->getTypeLoc().getSourceRange())) type = cx_.src.text(*range);
  clang::SourceLocation at = var->getLocation();
  if (SourceText::editable(at))
    at = clang::Lexer::getLocForEndOfToken(at, 0, cx_.src.manager(), cx_.src.context().getLangOpts());
  cx_.diags.report(note, at, {var->getNameAsString(), type, branch}, std::nullopt, var->getSourceRange());
}

void StaticChecks::checkNonTensor(const std::vector<StateVar>& state, const char* what) {
  for (const StateVar& v : state) {
    if (!v.root || v.global || v.type.isNull() || isCarriableType(v.type)) continue;
    if (!reported_.insert({v.root, 0}).second) continue;
    clang::PrintingPolicy policy(cx_.src.context().getLangOpts());
    policy.SuppressTagKeyword = true;
    const std::string type = v.type.getNonReferenceType().getUnqualifiedType().getAsString(policy);
    std::optional<clang::FixItHint> fixit;
    const auto* var = llvm::dyn_cast<clang::VarDecl>(v.root);
    if (var && !llvm::isa<clang::ParmVarDecl>(var) && v.expr == var->getName() && var->getType()->isArithmeticType() &&
        var->getTypeSourceInfo() &&
        SourceText::editable(var->getTypeSourceInfo()->getTypeLoc().getBeginLoc()) &&
        SourceText::editable(var->getTypeSourceInfo()->getTypeLoc().getEndLoc()))
      fixit = clang::FixItHint::CreateReplacement(var->getTypeSourceInfo()->getTypeLoc().getSourceRange(), "ag::Tensor");
    cx_.diags.report(Diag::NonTensorModified, v.where, {v.name, type, what}, fixit);
  }
}

void StaticChecks::checkAddressTaken(const Effects& effects, const char* what) {
  for (const auto& [root, loc] : effects.address_taken) {
    if (effects.declared.count(root) || !isTensorType(root->getType())) continue;
    if (!reported_.insert({root, cx_.src.offset(loc)}).second) continue;
    cx_.diags.report(Diag::AddressOfCarried, loc, {root->getNameAsString(), what});
  }
}

}  // namespace ag::rewriter
