// Lowers `return` into a return value and a flag (AutoGraph's return_statements converter):
// `ag::Tensor ag__retval;` (no value) and `ag::Tensor ag__do_return = false;` at the top,
// `return e;` becomes `ag__retval = e; ag__do_return = true;`, every loop it leaves stops on the
// flag, the statements after it are guarded, and the function ends with `return ag__retval;`.
// Lowered only when some return sits inside a staged construct; then all of them are, so that
// every path sets the same variables. Tuple returns get one ag__retval_K per element.
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/StmtCXX.h>
#include <fmt/format.h>

#include "ast_queries.h"
#include "expr_printer.h"
#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {
namespace {

size_t tensorTupleSize(clang::QualType type) {
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
      type.getCanonicalType()->getAsCXXRecordDecl());
  if (!spec || spec->getName() != "tuple" || !spec->isInStdNamespace()) return 0;
  const clang::TemplateArgumentList& args = spec->getTemplateArgs();
  if (args.size() != 1 || args[0].getKind() != clang::TemplateArgument::Pack) return 0;
  for (const clang::TemplateArgument& a : args[0].pack_elements())
    if (a.getKind() != clang::TemplateArgument::Type || !isTensorType(a.getAsType())) return 0;
  return args[0].pack_size();
}

}  // namespace

ReturnInfo returnInfoOf(const clang::FunctionDecl* fn, const SourceText& src) {
  ReturnInfo info;
  clang::QualType type = fn->getReturnType();
  info.is_void = type->isVoidType();
  info.is_tensor = isTensorType(type);
  info.tuple_size = tensorTupleSize(type);
  const clang::SourceRange written = fn->getReturnTypeSourceRange();
  if (auto range = src.fileRange(written); range && !type->getContainedAutoType()) {
    info.type = src.text(*range);
  } else if (type->isUndeducedType() || type->isDependentType()) {
    info.type = "ag::Tensor";  // a generic lambda returning auto: tensors are what it can stage
    info.is_tensor = true;
  } else {
    clang::PrintingPolicy policy(src.context().getLangOpts());
    policy.SuppressTagKeyword = true;
    info.type = type.getUnqualifiedType().getNonReferenceType().getAsString(policy);
  }
  return info;
}

void lowerReturnStatements(Context& cx, FunctionIr& ir, const ReturnInfo& info, Flags& flags) {
  if (!ir.returns_need_lowering) return;
  ExprPrinter printer(cx);
  const std::string do_return = cx.namer.plain("ag__do_return");
  flags.names.insert(do_return);
  std::vector<std::string> retvals;
  std::vector<StmtNodePtr> decls;
  const unsigned line = 0;  // declarations at the top stand for no line of their own
  if (info.tuple_size > 0) {
    for (size_t k = 0; k < info.tuple_size; ++k) retvals.push_back(cx.namer.plain(fmt::format("ag__retval_{}", k)));
    for (const std::string& r : retvals) {
      decls.push_back(makeGenerated(fmt::format(tmpl::kRetvalDecl, fmt::arg("type", "ag::Tensor"), fmt::arg("name", r), fmt::arg("init", "")), line));
      decls.back()->declares = r;
    }
  } else if (!info.is_void) {
    retvals.push_back(cx.namer.plain("ag__retval"));
    decls.push_back(makeGenerated(fmt::format(tmpl::kRetvalDecl, fmt::arg("type", info.is_tensor ? "ag::Tensor" : info.type),
                                              fmt::arg("name", retvals[0]), fmt::arg("init", info.is_tensor ? "" : "{}")),
                                  line));
    decls.back()->declares = retvals[0];
  }
  flags.names.insert(retvals.begin(), retvals.end());
  flags.retvals = retvals;
  decls.push_back(makeGenerated(fmt::format(tmpl::kFlagDecl, fmt::arg("flag", do_return)), line));
  decls.back()->declares = do_return;

  for (StmtNode* jump : ir.jumps) {
    if (jump->kind != NodeKind::Jump || jump->jump != JumpKind::Return) continue;
    const auto* ret = llvm::cast<clang::ReturnStmt>(jump->stmt);
    std::string text;
    if (const clang::Expr* value = ret->getRetValue()) {
      std::string v = printer.expression(value);
      if (info.tuple_size > 0) {
        std::string names;
        for (const std::string& r : retvals) names += (names.empty() ? "" : ", ") + r;
        if (v.empty() || v[0] != '{') v = "(" + v + ")";
        text = fmt::format(tmpl::kTupleRetvalSet, fmt::arg("names", names), fmt::arg("type", info.type), fmt::arg("value", v));
      } else if (info.is_void) {
        text = v + ";";
      } else {
        text = fmt::format(tmpl::kRetvalSet, fmt::arg("name", retvals[0]), fmt::arg("value", v));
      }
      text += "\n";
    }
    jump->kind = NodeKind::Generated;
    jump->text = text + fmt::format(tmpl::kFlagSet, fmt::arg("flag", do_return));
    jump->assigns = retvals;
    jump->assigns.push_back(do_return);
    for (StmtNode* loop : jump->enclosing_loops) {
      flags.loops.insert(loop);
      if (std::find(loop->stop_flags.begin(), loop->stop_flags.end(), do_return) == loop->stop_flags.end())
        loop->stop_flags.push_back(do_return);
    }
  }
  auto& children = ir.body->children;
  for (size_t i = 0; i < decls.size(); ++i) children.insert(children.begin() + static_cast<long>(i), std::move(decls[i]));
}

void appendFinalReturn(Context& cx, FunctionIr& ir, const ReturnInfo& info, const Flags& flags) {
  if (!ir.returns_need_lowering || info.is_void) return;
  const std::vector<std::string>& retvals = flags.retvals;
  std::string text;
  if (info.tuple_size > 0) {
    std::string names;
    for (const std::string& r : retvals) names += (names.empty() ? "" : ", ") + r;
    text = fmt::format(tmpl::kTupleReturn, fmt::arg("type", info.type), fmt::arg("names", names));
  } else {
    text = fmt::format(tmpl::kReturn, fmt::arg("value", retvals.empty() ? "" : retvals[0]));
  }
  const auto* body = llvm::cast<clang::CompoundStmt>(ir.body->stmt);
  ir.body->children.push_back(makeGenerated(text, cx.src.line(body->getRBracLoc())));
}

void markLoopsNeedingFlags(FunctionIr& ir, Flags& flags) {
  for (const StmtNode* jump : ir.jumps)
    if (jump->kind == NodeKind::Jump && jump->jump != JumpKind::Return && jump->target && isLoop(jump->target->kind) &&
        (jump->target->staged || jump->crosses_staged))
      flags.loops.insert(jump->target);
}

}  // namespace ag::rewriter
