// The report's FunctionObserver (ag/detail/function_observer.h), registered when this library is
// linked: AG_REPORT's bookkeeping of live Functions, the code texts it keeps from each compile,
// and report_html.
#include "ag/detail/function_observer.h"
#include "report_env.h"

namespace ag::detail {
namespace {

class ReportObserver final : public FunctionObserver {
 public:
  void function_created(FunctionView& f) override { report_env_track(&f); }
  void function_destroyed(FunctionView& f) override { report_env_untrack(&f); }
  // Under AG_REPORT, the IR and assembly are printed while the compiled code is at hand: the
  // report is written when the Function dies, and must not compile anything then.
  void concrete_compiled(ConcreteView& c) override {
    if (!report_dir().empty()) (void)c.code_texts(/*make=*/true);
  }
  void write_function_report(FunctionView& f, const std::string& path) override { report::write_function_report(f, path); }
  void write_concrete_report(ConcreteView& c, const std::string& path) override { report::write_concrete_report(c, path); }
};

struct Registrar {
  Registrar() { set_function_observer(&observer()); }
  ~Registrar() { set_function_observer(nullptr); }
  static ReportObserver& observer() {
    static auto* o = new ReportObserver;  // never destroyed: a late Function finds it unregistered
    return *o;
  }
};
const Registrar registrar;

}  // namespace
}  // namespace ag::detail

// Referenced by agc::report's link options so a static link keeps this object (and its registrar).
extern "C" void agc_report_anchor() {}
