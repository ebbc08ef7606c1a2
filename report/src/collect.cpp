// Gathers what the HTML report shows from a Function's view: stats, history, and per concrete
// function its graphs (the pipeline re-run stage by stage), plan, IR and assembly.
#include <fmt/format.h>

#include "ag/graph/passes.h"
#include "ag/graph/printer.h"
#include "report_data.h"

namespace ag::detail::report {
namespace {

bool same_fn(const std::weak_ptr<const ConcreteView>& w, const ConcreteView& c) {
  const std::shared_ptr<const ConcreteView> p = w.lock();
  return p.get() == &c;
}

// Why `c` was traced, from the newest trace event that made it.
void fill_reason(ConcreteReport& r, const ConcreteView& c, const std::vector<TraceEvent>& history) {
  for (auto it = history.rbegin(); it != history.rend(); ++it)
    if (it->kind == TraceEvent::Kind::Trace && same_fn(it->fn, c)) {
      r.reason = it->reason;
      r.trace_number = it->number;
      return;
    }
}

}  // namespace

ConcreteReport collect_concrete(ConcreteView& c, bool compile) {
  ConcreteReport r;
  r.signature = c.signature_str();
  r.graph = c.graph_ptr();
  r.node_times = profiled_node_times(r.graph.get());
  // The passes are pure functions of the traced graph: running them again shows each stage
  // without keeping every intermediate graph of every trace alive.
  optimize(c.traced_graph(), [&](const char* pass, const Graph& g) { r.stages.push_back({pass, graph_to_text(g)}); });
  if (compile && !c.is_compiled()) {
    try {
      c.compile_now();
    } catch (const std::exception& e) {
      r.not_compiled = fmt::format("compiling it failed: {}", e.what());
    }
  }
  const std::shared_ptr<const CodeTexts> texts = c.code_texts(/*make=*/compile);
  if (!texts) {
    if (r.not_compiled.empty())
      r.not_compiled = c.is_compiled() ? "its code was not printed (AG_REPORT prints it right after the compile)"
                                             : "not compiled yet (no call has run it)";
    return r;
  }
  r.backend = texts->backend;
  r.plan_text = texts->plan;
  r.ir = texts->ir;
  r.ir_opt = texts->ir_opt;
  r.assembly = texts->assembly;
  if (!texts->error.empty()) r.not_compiled = fmt::format("the backend could not print its code: {}", texts->error);
  return r;
}

FunctionReport collect_function(FunctionView& f, bool compile) {
  FunctionReport r;
  r.name = f.name();
  r.stats = f.stats();
  r.history = f.history();
  for (const auto& c : f.concrete_views()) {
    ConcreteReport cr = collect_concrete(*c, compile);
    fill_reason(cr, *c, r.history);
    r.concretes.push_back(std::move(cr));
  }
  return r;
}

}  // namespace ag::detail::report
