// What an observer of Functions (the HTML report, agc::report) may read of a Function and of its
// concrete functions: two small interfaces that FunctionCore and ConcreteCore implement, so the
// report reads no runtime/src/function header and cannot reach the cache's or the tracer's state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ag/backend.h"
#include "ag/function_options.h"
#include "ag/graph/graph.h"

namespace ag::detail {

class ConcreteView;

// One entry of a Function's trace history (the HTML report's "retrace history").
struct TraceEvent {
  enum class Kind : uint8_t { Trace, Evicted, EvictedAll };
  Kind kind = Kind::Trace;
  int64_t number = 0;       // Trace: trace #N of the Function
  std::string signature;    // the concrete function's signature_str()
  std::string reason;       // Trace: why it traced (the AG_LOG=retrace reason)
  double ms = 0;            // Trace: tracing and optimizing time
  std::weak_ptr<const ConcreteView> fn;
};

// What the backend printed about a concrete function's compiled code.
struct CodeTexts {
  std::string backend;  // Executable::backend_name()
  std::string plan;     // Executable::plan_text()
  Executable::MappedText ir, ir_opt, assembly;
  std::string error;  // why the backend could not print its code, or ""
};

// One traced signature of a Function.
class ConcreteView {
 public:
  // f(x: TensorSpec(shape=(2,), dtype=int32)) -> TensorSpec(shape=(2,), dtype=int32)
  virtual std::string signature_str() const = 0;
  virtual const std::string& name() const = 0;
  // The graph as traced, and as optimized (what runs).
  virtual const Graph& traced_graph() const = 0;
  virtual const std::shared_ptr<const Graph>& graph_ptr() const = 0;
  virtual bool is_compiled() const = 0;
  // Compiles now if no call has (a compile error throws).
  virtual void compile_now() = 0;
  // The compiled code's texts: null when not compiled, or when not captured yet and `make` is
  // false (with AG_REPORT they are captured right after the compile).
  virtual std::shared_ptr<const CodeTexts> code_texts(bool make) = 0;

 protected:
  ~ConcreteView() = default;
};

// A Function: its counters, its trace history, its concrete functions.
class FunctionView {
 public:
  virtual const std::string& name() const = 0;
  virtual FunctionStats stats() const = 0;
  // Oldest first (a bounded window: the oldest events are dropped).
  virtual std::vector<TraceEvent> history() const = 0;
  virtual std::vector<std::shared_ptr<ConcreteView>> concrete_views() const = 0;

 protected:
  ~FunctionView() = default;
};

}  // namespace ag::detail
