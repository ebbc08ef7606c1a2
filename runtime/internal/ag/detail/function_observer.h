// The seam through which an optional library observes Functions, the way the JIT plugs in as a
// CompilerBackend (ag/backend.h): the HTML report (agc::report, report/) registers an observer
// when it is linked. The runtime includes none of it, and it sees Functions only through the
// views of function_inspection.h.
#pragma once

#include <string>

#include "ag/detail/function_inspection.h"

namespace ag::detail {

class FunctionObserver {
 public:
  virtual ~FunctionObserver() = default;
  // A Function was made / is about to be destroyed (FunctionCore's constructor and destructor).
  virtual void function_created(FunctionView& f) = 0;
  virtual void function_destroyed(FunctionView& f) = 0;
  // A concrete function has just got its executable (compiled, or the interpreter).
  virtual void concrete_compiled(ConcreteView& c) = 0;
  // Function::report_html and ConcreteFunction::report_html.
  virtual void write_function_report(FunctionView& f, const std::string& path) = 0;
  virtual void write_concrete_report(ConcreteView& c, const std::string& path) = 0;
};

// The registered observer, or nullptr (no report library linked).
void set_function_observer(FunctionObserver* observer);
FunctionObserver* function_observer();

}  // namespace ag::detail
