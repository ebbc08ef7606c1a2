// Prints a converted statement tree: unchanged statements exactly as written, plain control
// flow around converted code as C++, staged constructs through their converters (one file
// each), with the state lists from the analysis and the static checks of the staging rules.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "code_writer.h"
#include "context.h"
#include "expr_printer.h"
#include "ir.h"
#include "liveness.h"
#include "state_analysis.h"
#include "static_checks.h"

namespace ag::rewriter {

class SourceEmitter {
 public:
  SourceEmitter(Context& cx, StateAnalysis& analysis, const Liveness& liveness, StaticChecks& checks, CodeWriter& out)
      : cx(cx), printer(cx), analysis(analysis), liveness(liveness), checks(checks), out(out) {}

  // Prints a statement at `indent`.
  void node(const StmtNode* n, int indent);
  // Prints a block's statements (or one statement) at `indent`.
  void statements(const StmtNode* n, int indent);
  // Whether anything in `n` is converted (otherwise it is printed as written).
  bool changed(const StmtNode* n);

  // `[&] { ... },` (or `[&](param) { ... },`): a branch or loop body as a lambda argument.
  // `prelude`: generated lines that open the body (a continue flag). `param_line`: the
  // original line of `param` (a range-for's loop variable).
  void lambda(const StmtNode* body, int indent, const std::string& param = {}, const std::vector<std::string>& prelude = {},
              unsigned param_line = 0);
  // The state of a staged construct made of `parts`: the variables it modifies that are
  // declared outside it and live after it (loops: or at their head), with the staging-rule
  // checks.
  std::vector<StateVar> state(const StmtNode& construct, const std::vector<const StmtNode*>& parts,
                              const std::vector<const clang::Expr*>& exprs, const char* what,
                              const clang::ValueDecl* declared_inside = nullptr);
  // `ag::state(...), {...}, AG_SOURCE_LOC(file, line));` (no #line of its own: it belongs to the construct)
  void stateTail(const std::vector<StateVar>& vars, unsigned line, int indent);
  // The condition of a staged loop, stopped by the loop's flags.
  std::string loopCondition(const StmtNode& loop);
  // The lines that open each iteration of a loop: its continue flag, if it has one.
  std::vector<std::string> iterationPrelude(const StmtNode& loop) const;
  // `ag::Tensor ag__break_N = false;` before a loop whose break is lowered.
  void breakFlagDeclaration(const StmtNode& loop, int indent);

  Context& cx;
  ExprPrinter printer;
  StateAnalysis& analysis;
  const Liveness& liveness;
  StaticChecks& checks;
  CodeWriter& out;

 private:
  void comments(const std::string& text, unsigned line, int indent);
  // A statement's text as written (a macro use spelling several statements: that use).
  std::string originalText(const StmtNode* n);
  void originalStatement(const StmtNode* n, const std::string& text, int indent);
  void block(const StmtNode* n, int indent);
  // A plain if/loop/switch whose keyword comes from a macro (`REPEAT(3) { ... }`): its header as
  // written, through the start of `body`; an error when the header itself must change.
  // nullopt when the keyword is spelled in the file.
  std::optional<std::string> macroHeader(const StmtNode* n, const clang::Stmt* body, bool header_changes);
  void plainIf(const StmtNode* n, int indent, const std::string& prefix);
  void plainLoop(const StmtNode* n, int indent);
  void switchStatement(const StmtNode* n, int indent);
  void tryStatement(const StmtNode* n, int indent);
  void labeled(const StmtNode* n, int indent);
  std::map<const StmtNode*, bool> changed_;
};

// The converters of staged statements, one file each.
void emitIfStatement(SourceEmitter& e, const StmtNode& n, int indent);
void emitWhileStatement(SourceEmitter& e, const StmtNode& n, int indent);
void emitDoWhileStatement(SourceEmitter& e, const StmtNode& n, int indent);
void emitForStatement(SourceEmitter& e, const StmtNode& n, int indent);
void emitRangeForStatement(SourceEmitter& e, const StmtNode& n, int indent);

}  // namespace ag::rewriter
