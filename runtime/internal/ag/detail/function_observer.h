// The seam through which an optional library observes Functions, the way the JIT plugs in as a
// CompilerBackend (ag/backend.h): the HTML report (agc::report, report/) registers an observer
// when it is linked. The runtime includes none of it.
#pragma once

#include <string>

namespace ag::detail {

class FunctionCore;
class ConcreteCore;

class FunctionObserver {
 public:
  virtual ~FunctionObserver() = default;
  // A Function was made / is about to be destroyed (FunctionCore's constructor and destructor).
  virtual void function_created(FunctionCore& f) = 0;
  virtual void function_destroyed(FunctionCore& f) = 0;
  // A concrete function has just got its executable (compiled, or the interpreter).
  virtual void concrete_compiled(ConcreteCore& c) = 0;
  // Function::report_html and ConcreteFunction::report_html.
  virtual void write_function_report(FunctionCore& f, const std::string& path) = 0;
  virtual void write_concrete_report(ConcreteCore& c, const std::string& path) = 0;
};

// The registered observer, or nullptr (no report library linked).
void set_function_observer(FunctionObserver* observer);
FunctionObserver* function_observer();

}  // namespace ag::detail
