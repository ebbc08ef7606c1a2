// AG_REPORT=<dir>: every Function writes its HTML report there when it is destroyed, and the
// Functions still alive at process exit write theirs then (docs/inspection.md).
#pragma once

#include <string>

namespace ag::detail {

class FunctionView;
class ConcreteView;

// The AG_REPORT directory, read once ("" when unset).
const std::string& report_dir();
// Called for every Function made and destroyed (the report's FunctionObserver, registrar.cpp);
// without AG_REPORT they do nothing. The destructor's call writes the report (errors are
// logged: a destructor does not throw).
void report_env_track(FunctionView* f);
void report_env_untrack(FunctionView* f);

namespace report {
// The report of `f` at `path`; compile = false runs no backend: concrete functions not compiled
// have no code sections, and the code texts are the ones captured at compile time.
void write_function_report(FunctionView& f, const std::string& path, bool compile = true);
void write_concrete_report(ConcreteView& c, const std::string& path);
}  // namespace report

// Writes `html` to `path` through a temporary file and a rename; an ag::Error names the path
// when it cannot be written.
void write_report_file(const std::string& path, const std::string& html);

}  // namespace ag::detail
