// The registry of the Function observer (function_observer.h), and report_html's entry points,
// which need the report library.
#include "ag/detail/function_observer.h"

#include <atomic>

#include "function_core.h"
#include "ag/error.h"

namespace ag::detail {
namespace {

std::atomic<FunctionObserver*> g_observer{nullptr};

FunctionObserver& report_library(const char* what) {
  FunctionObserver* o = function_observer();
  if (!o)
    throw UnimplementedError(std::string(what) +
                             ": the HTML report is the agc::report library, and this program does not link it: link "
                             "agc::agc (the runtime, the JIT and the report) or agc::report");
  return *o;
}

}  // namespace

void set_function_observer(FunctionObserver* observer) { g_observer.store(observer, std::memory_order_release); }
FunctionObserver* function_observer() { return g_observer.load(std::memory_order_acquire); }

void write_function_report(FunctionCore& f, const std::string& path) {
  report_library("Function::report_html").write_function_report(f, path);
}

void write_concrete_report(ConcreteCore& c, const std::string& path) {
  report_library("ConcreteFunction::report_html").write_concrete_report(c, path);
}

}  // namespace ag::detail
