// Build-time warnings for staging-rule violations that the static types and the order of the
// source already show (the runtime raises the same as ConversionErrors when tracing).
#pragma once

#include <clang/AST/Stmt.h>

#include <map>
#include <set>
#include <vector>

#include "context.h"
#include "state_analysis.h"

namespace ag::rewriter {

class StaticChecks {
 public:
  StaticChecks(Context& cx, const clang::Stmt* function_body);

  // A variable with no value before a staged if, assigned in one branch only, used after it.
  void checkIf(const clang::Stmt* s, const std::vector<StateVar>& state, const Effects& then_effects,
               const Effects& else_effects);
  // The staged loops around the statements being checked (a variable declared before one of
  // them is carried by it, so an if inside may be the first to give it a value).
  void enterStagedLoop(const clang::Stmt* loop);
  void exitStagedLoop() { loops_.pop_back(); }
  // A non-tensor local modified under a tensor condition.
  void checkNonTensor(const std::vector<StateVar>& state, const char* what);
  // The address of a carried tensor taken inside a staged construct.
  void checkAddressTaken(const Effects& effects, const char* what);

 private:
  struct Ref {
    unsigned offset;
    bool write;  // assigned without reading its old value
  };
  bool hasValueBefore(const clang::VarDecl* v, unsigned offset) const;
  bool usedAfter(const clang::VarDecl* v, unsigned offset) const;
  static const clang::VarDecl* localTensor(const StateVar& v);
  // The note after a no-value warning: what to write at `var`'s declaration.
  void noteWhatToWrite(const clang::VarDecl* var, Diag note, const char* branch);

  Context& cx_;
  std::map<const clang::VarDecl*, std::vector<Ref>> refs_;
  std::set<std::pair<const void*, unsigned>> reported_;
  std::vector<unsigned> loops_;  // where each enclosing staged loop begins
};

}  // namespace ag::rewriter
