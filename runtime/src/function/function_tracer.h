// FunctionTracer: runs a Function's C++ body once with symbolic tensors into a graph for a
// signature, optimizes it and makes its ConcreteCore. FunctionCore decides when to trace (its
// cache, one trace per signature under concurrency); this decides nothing, it traces.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ag/detail/function_core.h"
#include "concrete.h"

namespace ag::detail {

struct TraceRoot;

// Inlines concrete function `c` into the current trace frame with the tensors of `args` (in
// graph-parameter order) as its inputs: a Function or ConcreteFunction called while another one
// traces. While a tape records in that frame, the call is replayed op by op from its traced
// graph instead (replay_graph), so that the tape records each op (and custom gradients): nested
// Functions under a tape inside a trace, grad of grad.
void inline_into_current_frame(const ConcreteCore& c, std::span<const ArgView> args, std::span<Tensor> outputs);

class FunctionTracer {
 public:
  // `info` and `options` are the owning FunctionCore's and outlive this.
  FunctionTracer(const FunctionInfo& info, const FunctionOptions& options, size_t num_outputs, Tracer body,
                 std::shared_ptr<StatCounters> stats);

  // Traces `sig` (whose key is `sig_key`) with the call's `args`; `reason` is why (the retrace
  // log). Throws what the body throws, and ConversionError for a recursion that would not end.
  std::shared_ptr<ConcreteCore> trace(const Signature& sig, const KeyBuf& sig_key, std::span<const ArgView> args,
                                      const std::string& reason);
  // This thread is inside trace() for the signature keyed `sig_words`: tracing it again would
  // recurse forever.
  bool tracing_on_this_thread(const std::vector<uint64_t>& sig_words) const;
  [[noreturn]] void throw_recursion(const Signature& sig) const;

 private:
  // Runs the body once into a new graph (verified), in a frame of `root`.
  std::shared_ptr<const Graph> trace_graph(const Signature& sig, std::span<const ArgView> args,
                                           const std::shared_ptr<TraceRoot>& root);
  std::shared_ptr<TraceRoot> new_root(bool singleton_check);

  const FunctionInfo& info_;
  const FunctionOptions& options_;
  const std::shared_ptr<const std::string> name_ptr_;
  const size_t num_outputs_;
  const Tracer body_;
  const std::shared_ptr<StatCounters> stats_;
  std::atomic<int64_t> traces_started_{0};
};

}  // namespace ag::detail
