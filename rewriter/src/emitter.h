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

class Emitter {
 public:
  Emitter(Context& cx, StateAnalysis& analysis, const Liveness& liveness, StaticChecks& checks, CodeWriter& out)
      : cx(cx), printer(cx), analysis(analysis), liveness(liveness), checks(checks), out(out) {}

  // Prints a statement at `indent`.
  void node(const Node* n, int indent);
  // Prints a block's statements (or one statement) at `indent`.
  void statements(const Node* n, int indent);
  // Whether anything in `n` is converted (otherwise it is printed as written).
  bool changed(const Node* n);

  // `[&] { ... },` (or `[&](param) { ... },`): a branch or loop body as a lambda argument.
  // `prelude`: generated lines that open the body (a continue flag). `param_line`: the
  // original line of `param` (a range-for's loop variable).
  void lambda(const Node* body, int indent, const std::string& param = {}, const std::vector<std::string>& prelude = {},
              unsigned param_line = 0);
  // The state of a staged construct made of `parts`: the variables it modifies that are
  // declared outside it and live after it (loops: or at their head), with the staging-rule
  // checks.
  std::vector<StateVar> state(const Node& construct, const std::vector<const Node*>& parts,
                              const std::vector<const clang::Expr*>& exprs, const char* what,
                              const clang::ValueDecl* declared_inside = nullptr);
  // `ag::state(...), {...}, AG_SOURCE_LOC(file, line));` (no #line of its own: it belongs to the construct)
  void stateTail(const std::vector<StateVar>& vars, unsigned line, int indent);
  // The condition of a staged loop, stopped by the loop's flags.
  std::string loopCondition(const Node& loop);
  // The lines that open each iteration of a loop: its continue flag, if it has one.
  std::vector<std::string> iterationPrelude(const Node& loop) const;
  // `ag::Tensor ag__break_N = false;` before a loop whose break is lowered.
  void breakFlagDeclaration(const Node& loop, int indent);

  Context& cx;
  ExprPrinter printer;
  StateAnalysis& analysis;
  const Liveness& liveness;
  StaticChecks& checks;
  CodeWriter& out;

 private:
  void comments(const std::string& text, unsigned line, int indent);
  // A statement's text as written (a macro use spelling several statements: that use).
  std::string originalText(const Node* n);
  void originalStatement(const Node* n, const std::string& text, int indent);
  void block(const Node* n, int indent);
  // A plain if/loop/switch whose keyword comes from a macro (`REPEAT(3) { ... }`): its header as
  // written, through the start of `body`; an error when the header itself must change.
  // nullopt when the keyword is spelled in the file.
  std::optional<std::string> macroHeader(const Node* n, const clang::Stmt* body, bool header_changes);
  void plainIf(const Node* n, int indent, const std::string& prefix);
  void plainLoop(const Node* n, int indent);
  void switchStatement(const Node* n, int indent);
  void tryStatement(const Node* n, int indent);
  void labeled(const Node* n, int indent);
  std::map<const Node*, bool> changed_;
};

// The converters of staged statements, one file each.
void emitIfStatement(Emitter& e, const Node& n, int indent);
void emitWhileStatement(Emitter& e, const Node& n, int indent);
void emitDoWhileStatement(Emitter& e, const Node& n, int indent);
void emitForStatement(Emitter& e, const Node& n, int indent);
void emitRangeForStatement(Emitter& e, const Node& n, int indent);

}  // namespace ag::rewriter
