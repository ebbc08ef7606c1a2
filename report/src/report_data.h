// What the HTML report shows, gathered from a Function and its concrete functions (their views,
// ag/detail/function_inspection.h); the
// page is rendered from this alone (report_html.cpp), so it can be tested without a backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ag/backend.h"
#include "ag/detail/function_inspection.h"
#include "ag/detail/profiler.h"

namespace ag::detail::report {

// The graph after one pass of the pipeline ("traced" first).
struct Stage {
  std::string pass;
  std::string text;
};

struct ConcreteReport {
  std::string signature;
  std::string reason;        // why it was traced; "" when the history no longer says
  int64_t trace_number = 0;  // 0 when unknown
  std::shared_ptr<const Graph> graph;  // the optimized graph
  std::vector<Stage> stages;
  std::string backend;        // "jit", "interpreter"; "" when not compiled
  std::string not_compiled;   // why there is no code: a compile error, or "not compiled yet"
  std::string plan_text;      // the backend's plan (the JIT's fused groups)
  Executable::MappedText ir, ir_opt, assembly;
  // The time of each node of `graph` in the latest ag::profiler profile (compiled loop nests,
  // interpreted ops), costliest first; empty when no profile timed this concrete function.
  std::vector<NodeTime> node_times;
};

struct FunctionReport {
  std::string name;
  bool whole_function = true;  // false: the report of one ConcreteFunction
  FunctionStats stats;
  std::vector<TraceEvent> history;
  std::vector<ConcreteReport> concretes;
};

// compile: compile concrete functions that have not been yet (report_html does; a report
// written while tracing does not).
FunctionReport collect_function(FunctionView& f, bool compile = true);
ConcreteReport collect_concrete(ConcreteView& c, bool compile = true);

}  // namespace ag::detail::report
