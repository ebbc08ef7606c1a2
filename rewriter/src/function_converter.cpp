// The conversion pipeline of one function, in AutoGraph's order (its api.py).
#include "function_converter.h"

#include <llvm/Support/PrettyStackTrace.h>

#include "code_writer.h"
#include "emitter.h"
#include "ir_builder.h"
#include "liveness.h"
#include "lowering.h"
#include "recursion_check.h"
#include "state_analysis.h"
#include "static_checks.h"

namespace ag::rewriter {
namespace {

// Names the function being converted in a crash report.
class ConvertingFunction : public llvm::PrettyStackTraceEntry {
 public:
  ConvertingFunction(const clang::FunctionDecl* fn, const SourceText& src) : fn_(fn), src_(src) {}
  void print(llvm::raw_ostream& os) const override {
    os << "ag-rewrite: converting '" << fn_->getNameAsString() << "' at line " << src_.line(fn_->getLocation()) << "\n";
  }

 private:
  const clang::FunctionDecl* fn_;
  const SourceText& src_;
};

// The indentation of the body's statements: the first one's, or its '{' line's plus two.
int bodyIndent(const SourceText& src, const clang::CompoundStmt* body) {
  if (!body->body_empty()) {
    const clang::SourceLocation first = body->body_front()->getBeginLoc();
    const std::string indent = src.indentOf(first);
    if (src.column(first) == indent.size() + 1 && src.line(first) != src.line(body->getLBracLoc()))
      return static_cast<int>(indent.size());
  }
  return static_cast<int>(src.indentOf(body->getLBracLoc()).size()) + 2;
}

}  // namespace

std::optional<std::string> convertFunctionBody(Context& cx, const clang::FunctionDecl* fn,
                                               const clang::CompoundStmt* body) {
  ConvertingFunction stack_entry(fn, cx.src);
  FunctionIr ir = buildFunctionIr(cx, body);

  // break / continue / return are lowered to flags before loops and branches are converted:
  // a jump cannot leave the lambda a staged body becomes, a flag can. Returns go first, since
  // whether they are lowered decides which loops need flags; the guards come after all three.
  Flags flags;
  lowerReturnStatements(cx, ir, returnInfoOf(fn, cx.src), flags);
  markLoopsNeedingFlags(ir, flags);
  lowerBreakStatements(cx, ir, flags);
  lowerContinueStatements(cx, ir, flags);
  guardStatementsAfterJumps(cx, ir, flags);
  appendFinalReturn(cx, ir, returnInfoOf(fn, cx.src), flags);
  checkGotoStatements(cx, ir);

  // Then the statements are printed: staged if/loops through their converters, logical and
  // conditional expressions on tensors as they are met, lambdas inside through this function.
  StateAnalysis analysis(cx.src);
  const Liveness liveness(fn, ir.body.get(), [&analysis](const StmtNode* n) {
    Liveness::Vars written;
    if (n)
      for (const StateVar& m : analysis.ofNode(n).modified)
        if (m.root) written.insert(m.root);
    return written;
  });
  stageLoopsStoppedByTensors(cx, ir, flags, analysis, liveness);
  checkRecursionUnderStagedControlFlow(cx, fn, ir);
  StaticChecks checks(cx, body);
  CodeWriter out;
  SourceEmitter emitter(cx, analysis, liveness, checks, out);
  if (!emitter.changed(ir.body.get())) return std::nullopt;
  emitter.statements(ir.body.get(), bodyIndent(cx.src, body));

  const unsigned open_line = cx.src.line(body->getLBracLoc());
  const unsigned close_line = cx.src.line(body->getRBracLoc());
  std::string text = "{\n" + out.render(cx.options.line_directives, open_line + 1);
  if (cx.options.line_directives) text += lineDirective(close_line) + "\n";
  const std::string close_indent = cx.src.indentOf(body->getRBracLoc());
  const bool brace_starts_line = cx.src.column(body->getRBracLoc()) == close_indent.size() + 1;
  text += (brace_starts_line ? close_indent : cx.src.indentOf(body->getLBracLoc())) + "}";
  return text;
}

}  // namespace ag::rewriter
