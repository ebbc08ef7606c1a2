// The modification analysis over Clang's AST and the statement tree.
#include "state_analysis.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

#include <algorithm>

#include "ast_queries.h"

namespace ag::rewriter {
namespace {

// The access path of an lvalue rooted at a named variable: x, s.h, arr[0], this->w.
struct Path {
  const clang::ValueDecl* root = nullptr;
  std::string expr, suffix;
  bool global = false;
};

std::optional<Path> pathOf(const clang::Expr* e, const clang::ASTContext& ctx) {
  e = e->IgnoreParenImpCasts();
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
    if (!var) return std::nullopt;
    Path p{var, ref->getNameInfo().getAsString(), "", var->hasGlobalStorage()};
    return p;
  }
  if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
    const std::string name = member->getMemberNameInfo().getAsString();
    const clang::Expr* base = member->getBase()->IgnoreParenImpCasts();
    if (llvm::isa<clang::CXXThisExpr>(base)) return Path{member->getMemberDecl(), "this->" + name, "", false};
    if (member->isArrow()) return std::nullopt;
    auto p = pathOf(base, ctx);
    if (p) p->expr += "." + name, p->suffix += "." + name;
    return p;
  }
  if (const auto* member = llvm::dyn_cast<clang::CXXDependentScopeMemberExpr>(e)) {
    if (member->isImplicitAccess() || member->isArrow()) return std::nullopt;
    auto p = pathOf(member->getBase(), ctx);
    const std::string name = member->getMember().getAsString();
    if (p) p->expr += "." + name, p->suffix += "." + name;
    return p;
  }
  const clang::Expr* base = nullptr;
  const clang::Expr* index = nullptr;
  if (const auto* sub = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) base = sub->getBase(), index = sub->getIdx();
  if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); op && op->getOperator() == clang::OO_Subscript)
    base = op->getArg(0), index = op->getArg(1);
  if (base) {
    auto p = pathOf(base, ctx);
    if (!p) return p;
    if (index && !index->isValueDependent())
      if (auto value = index->getIntegerConstantExpr(ctx)) {
        const std::string k = "[" + std::to_string(value->getExtValue()) + "]";
        p->expr += k, p->suffix += k;
      }
    return p;
  }
  return std::nullopt;
}

class EffectsWalker {
 public:
  EffectsWalker(const clang::ASTContext& ctx, Effects& out) : ctx_(ctx), out_(out) {}

  void walk(const clang::Stmt* s) {
    if (!s || isLoopOptions(s)) return;
    visit(s);
    for (const clang::Stmt* child : s->children()) walk(child);
    if (const auto* lambda = llvm::dyn_cast<clang::LambdaExpr>(s)) {
      for (const clang::ParmVarDecl* p : lambda->getCallOperator()->parameters()) out_.declared.insert(p);
    }
  }

 private:
  // `direct`: an assignment, ++ or --, which counts for globals too; a mutation through a
  // non-const member function or reference parameter counts for locals only (so that printing
  // to std::cout is not a modification of a global).
  void modified(const clang::Expr* e, bool direct) {
    auto p = pathOf(e, ctx_);
    if (!p || isVariableType(p->root->getType())) return;
    if (p->global && !direct) return;
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(p->root); var && var->getType().isConstQualified()) return;
    StateVar v;
    v.root = p->root;
    v.expr = p->expr;
    v.global = p->global;
    v.name = p->global ? "::" + p->root->getQualifiedNameAsString() + p->suffix : p->expr;
    v.key = std::to_string(reinterpret_cast<uintptr_t>(p->root)) + p->suffix;
    v.type = e->getType();
    v.where = e->getBeginLoc();
    out_.modified.push_back(std::move(v));
  }

  // Arguments [first, end) of a call, bound to the parameters of `fn` in order.
  void arguments(const clang::FunctionDecl* fn, const clang::CallExpr* call, unsigned first) {
    if (!fn) return;
    for (unsigned i = first; i < call->getNumArgs() && i - first < fn->getNumParams(); ++i) {
      clang::QualType t = fn->getParamDecl(i - first)->getType();
      if (t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified()) modified(call->getArg(i), false);
    }
  }

  void visit(const clang::Stmt* s) {
    if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(s)) {
      if (bin->isAssignmentOp()) modified(bin->getLHS(), true);
    } else if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(s)) {
      if (un->isIncrementDecrementOp()) modified(un->getSubExpr(), true);
      if (un->getOpcode() == clang::UO_AddrOf) addressTaken(un->getSubExpr(), un->getBeginLoc());
    } else if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(s)) {
      const auto kind = op->getOperator();
      if (op->isAssignmentOp() || kind == clang::OO_PlusPlus || kind == clang::OO_MinusMinus) {
        modified(op->getArg(0), true);
      } else if (const auto* method = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(op->getDirectCallee())) {
        if (!method->isConst() && !method->isStatic()) modified(op->getArg(0), false);
        arguments(method, op, 1);
      } else {
        arguments(op->getDirectCallee(), op, 0);
      }
    } else if (const auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(s)) {
      const clang::CXXMethodDecl* method = call->getMethodDecl();
      if (method && !method->isConst() && !method->isStatic() && call->getImplicitObjectArgument())
        modified(call->getImplicitObjectArgument(), false);
      arguments(method, call, 0);
    } else if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s)) {
      arguments(call->getDirectCallee(), call, 0);
    } else if (const auto* decl = llvm::dyn_cast<clang::DeclStmt>(s)) {
      for (const clang::Decl* d : decl->decls()) {
        const auto* var = llvm::dyn_cast<clang::VarDecl>(d);
        if (!var) continue;
        out_.declared.insert(var);
        if (const auto* decomposition = llvm::dyn_cast<clang::DecompositionDecl>(var))
          for (const clang::BindingDecl* b : decomposition->bindings()) out_.declared.insert(b);
        clang::QualType t = var->getType();
        if (t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified() && var->getInit())
          addressTaken(var->getInit(), var->getLocation());
      }
    }
  }

  // ag::set_loop_options names loop variables by address (`{{&x, {-1}}}`) to pin their shapes:
  // the address it takes is the variable's own, which the runtime matches against the loop's
  // carried state, and the call changes nothing.
  static bool isLoopOptions(const clang::Stmt* s) {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(s);
    const clang::FunctionDecl* fn = call ? call->getDirectCallee() : nullptr;
    return fn && fn->getQualifiedNameAsString() == "ag::set_loop_options";
  }

  void addressTaken(const clang::Expr* e, clang::SourceLocation loc) {
    auto p = pathOf(e, ctx_);
    if (p && p->suffix.empty()) out_.address_taken.push_back({p->root, loc});
  }

  const clang::ASTContext& ctx_;
  Effects& out_;
};

void mergeModified(std::vector<StateVar>& into, const std::vector<StateVar>& from) {
  for (const StateVar& v : from)
    if (std::none_of(into.begin(), into.end(), [&](const StateVar& w) { return w.key == v.key; })) into.push_back(v);
}

// A struct of tensors is carried field by field (`p.w`, `p.b`), nested structs too: the
// runtime sees only tensors and containers of them.
void appendFields(const StateVar& v, std::vector<StateVar>& out) {
  const clang::CXXRecordDecl* record = v.global ? nullptr : tensorStruct(v.type);
  if (!record) {
    out.push_back(v);
    return;
  }
  for (const clang::FieldDecl* f : record->fields()) {
    StateVar field = v;
    const std::string name = f->getNameAsString();
    field.expr += "." + name;
    field.name += "." + name;
    field.key += "." + name;
    field.type = f->getType();
    appendFields(field, out);
  }
}

}  // namespace

void Effects::merge(const Effects& other) {
  mergeModified(modified, other.modified);
  declared.insert(other.declared.begin(), other.declared.end());
  declared_generated.insert(other.declared_generated.begin(), other.declared_generated.end());
  address_taken.insert(address_taken.end(), other.address_taken.begin(), other.address_taken.end());
}

const Effects& StateAnalysis::ofStmt(const clang::Stmt* s) {
  auto it = cache_.find(s);
  if (it != cache_.end()) return it->second;
  Effects e;
  EffectsWalker(src_.context(), e).walk(s);
  return cache_.emplace(s, std::move(e)).first->second;
}

Effects StateAnalysis::ofNode(const StmtNode* n) {
  Effects e;
  if (!n) return e;
  switch (n->kind) {
    case NodeKind::Original:
    case NodeKind::Jump:
      if (n->stmt) e.merge(ofStmt(n->stmt));
      for (const auto& c : n->children) e.merge(ofNode(c.get()));  // a macro use spelling several statements
      return e;
    case NodeKind::Generated: {
      if (n->stmt) e.merge(ofStmt(n->stmt));
      for (const std::string& name : n->assigns) {
        StateVar v;
        v.expr = v.name = v.key = name;
        mergeModified(e.modified, {v});
      }
      if (!n->declares.empty()) e.declared_generated.insert(n->declares);
      return e;
    }
    default: break;
  }
  for (const StmtNode* c : childrenOf(*n)) e.merge(ofNode(c));
  for (const clang::Expr* x : {n->cond, n->inc, n->range})
    if (x) e.merge(ofStmt(x));
  if (n->loop_var) e.declared.insert(n->loop_var);
  if (!n->continue_flag.empty()) e.declared_generated.insert(n->continue_flag);
  if (!n->break_flag.empty()) e.declared_generated.insert(n->break_flag);  // declared just before the loop
  if (!n->scoped_flag.empty()) e.declared_generated.insert(n->scoped_flag);  // declared at the body's start
  return e;
}

std::vector<StateVar> StateAnalysis::stateOf(const std::vector<const StmtNode*>& parts,
                                             const std::vector<const clang::Expr*>& exprs,
                                             const clang::ValueDecl* extra_declared) {
  Effects all;
  for (const StmtNode* p : parts) all.merge(ofNode(p));
  for (const clang::Expr* x : exprs)
    if (x) all.merge(ofStmt(x));
  if (extra_declared) all.declared.insert(extra_declared);
  std::vector<StateVar> out;
  for (const StateVar& v : all.modified) {
    if (v.root ? all.declared.count(v.root) > 0 : all.declared_generated.count(v.key) > 0) continue;
    out.push_back(v);
  }
  // A whole aggregate covers its members and elements.
  std::vector<StateVar> kept;
  for (const StateVar& v : out) {
    bool covered = std::any_of(out.begin(), out.end(), [&](const StateVar& w) {
      return w.root == v.root && v.root && w.key != v.key && v.key.rfind(w.key, 0) == 0 &&
             (v.key[w.key.size()] == '.' || v.key[w.key.size()] == '[');
    });
    if (!covered) kept.push_back(v);
  }
  std::vector<StateVar> fields;
  for (const StateVar& v : kept) appendFields(v, fields);
  std::sort(fields.begin(), fields.end(), [](const StateVar& a, const StateVar& b) { return a.name < b.name; });
  return fields;
}

}  // namespace ag::rewriter
