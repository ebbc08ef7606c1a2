// Every diagnostic ag-rewrite reports, through Clang's DiagnosticsEngine so that it prints like
// clang's own (file:line:col, caret, fix-its), from one table that keeps the wording uniform.
#pragma once

#include <clang/Basic/Diagnostic.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ag::rewriter {

enum class Diag {
  // Errors: constructs that cannot be converted.
  GotoInStaged,
  GotoAcrossGuard,
  SwitchOnTensor,
  TryInStaged,
  AddressOfCarried,
  InsideMacro,
  PartOfMacro,
  ConditionVariable,
  JumpOutOfSwitch,
  RecursionUnderStaged,
  // Warnings: staging-rule violations visible statically (the runtime raises them when tracing).
  NoValueAfterIf,
  NonTensorModified,
  UnmarkedCallee,
  MarkedInHeader,
  // Notes.
  NoteValueForIf,
  NoteCalleeHere,
  NoteStagedBy,
  NoteStagedAfterJump,
};

class Diagnostics {
 public:
  explicit Diagnostics(clang::DiagnosticsEngine& engine) : engine_(engine) {}

  // Reports `kind` at `loc`; `args` fill %0, %1, ... of its message. An error already reported
  // at `loc` is not repeated (the same code may be printed, and checked, more than once).
  void report(Diag kind, clang::SourceLocation loc, const std::vector<std::string>& args = {},
              std::optional<clang::FixItHint> fixit = std::nullopt, clang::SourceRange range = {});
  bool hasErrors() const { return errors_ > 0; }

 private:
  clang::DiagnosticsEngine& engine_;
  unsigned errors_ = 0;
  std::set<std::pair<Diag, clang::SourceLocation::UIntTy>> errors_reported_;
};

}  // namespace ag::rewriter
