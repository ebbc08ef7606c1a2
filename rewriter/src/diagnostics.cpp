// The message table of ag-rewrite's diagnostics (clang style: lower case, no trailing period).
#include "diagnostics.h"

namespace ag::rewriter {
namespace {

struct DiagInfo {
  clang::DiagnosticsEngine::Level level;
  const char* format;
};

DiagInfo infoOf(Diag kind) {
  using L = clang::DiagnosticsEngine::Level;
  switch (kind) {
    case Diag::GotoInStaged:
      return {L::Error, "goto cannot be converted: it crosses the body of a tensor-dependent %0; use break, continue or return"};
    case Diag::GotoAcrossGuard:
      return {L::Error, "goto cannot be converted: the statements after a lowered break, continue or return run in "
                        "a staged guard (a lambda), and this jump would cross it; use break, continue or return"};
    case Diag::SwitchOnTensor:
      return {L::Error, "switch on a tensor cannot be converted; use if / else if on the tensor's value"};
    case Diag::TryInStaged:
      return {L::Error, "try/catch inside a tensor-dependent %0 cannot be converted: the staged body runs while "
                        "tracing; move the try/catch around the %0"};
    case Diag::AddressOfCarried:
      return {L::Error, "cannot take the address of '%0' inside a tensor-dependent %1: '%0' is carried through the "
                        "staged %1 and is rebound by it; use the variable directly"};
    case Diag::InsideMacro:
      return {L::Error, "%0 needs rewriting but is inside a macro expansion; write it outside the macro"};
    case Diag::PartOfMacro:
      return {L::Error, "this statement comes from a macro expansion that does not spell whole statements, so it "
                        "cannot be kept as written in the converted function; make the macro expand to one whole "
                        "statement (do { ... } while (0))"};
    case Diag::ConditionVariable:
      return {L::Error, "a variable declared in the condition of a tensor-dependent %0 cannot be converted; declare "
                        "it before the %0"};
    case Diag::JumpOutOfSwitch:
      return {L::Error, "break out of a switch from inside a tensor-dependent %0 cannot be converted"};
    case Diag::RecursionUnderStaged:
      return {L::Error, "'%0' calls itself under a tensor-dependent %1, which tracing stages whatever the tensor's "
                        "value, so tracing '%0' would recurse without end; write the recursion as a loop on tensors "
                        "(a while loop on a tensor condition that updates the values the recursive call would take)"};
    case Diag::NoValueAfterIf:
      return {L::Warning, "'%0' has no value before this tensor-dependent if and is assigned only in the %1 branch, "
                          "but is used after it; tracing will fail with a ConversionError"};
    case Diag::NonTensorModified:
      return {L::Warning, "'%0' (of type '%1') is modified inside a tensor-dependent %2; staging it will fail with "
                          "a ConversionError: only locals of tensor type (ag::Tensor, ag::TensorArray, a std::array "
                          "or std::vector of them, a struct of those) can change inside staged control flow"};
    case Diag::UnmarkedCallee:
      return {L::Warning, "'%0' has control flow on tensors but is not marked AG_FUNCTION; calling it from a traced "
                          "function will fail with a ConversionError"};
    case Diag::MarkedInHeader:
      return {L::Warning, "'%0' is marked AG_FUNCTION but is defined in a header, which ag-rewrite does not rewrite; "
                          "its control flow on tensors stays unconverted: define it in a source file that is rewritten"};
    case Diag::NoteValueForIf:
      return {L::Note, "'%0' is declared here without a value: write '%1 %0 = <value>;' with the value '%0' must have "
                       "when the %2 branch runs, or assign '%0' in the %2 branch too"};
    case Diag::NoteCalleeHere: return {L::Note, "mark '%0' AG_FUNCTION"};
    case Diag::NoteStagedBy: return {L::Note, "the tensor-dependent %0 that stages the call"};
    case Diag::NoteStagedAfterJump:
      return {L::Note, "a return, break or continue inside this tensor-dependent %0 decides at run time whether the "
                       "statements after it run, so they are staged"};
  }
  return {L::Error, "internal: unknown diagnostic"};
}

}  // namespace

void Diagnostics::report(Diag kind, clang::SourceLocation loc, const std::vector<std::string>& args,
                         std::optional<clang::FixItHint> fixit, clang::SourceRange range) {
  const DiagInfo info = infoOf(kind);
  if (info.level == clang::DiagnosticsEngine::Error) {
    if (!errors_reported_.insert({kind, loc.getRawEncoding()}).second) return;
    ++errors_;
  }
  const unsigned id = engine_.getDiagnosticIDs()->getCustomDiagID(
      static_cast<clang::DiagnosticIDs::Level>(info.level), info.format);
  clang::DiagnosticBuilder builder = engine_.Report(loc, id);
  for (const std::string& arg : args) builder << arg;
  if (range.isValid()) builder << range;
  if (fixit) builder << *fixit;
}

}  // namespace ag::rewriter
