// FunctionCore: the per-Function cache of concrete functions and the trace-on-miss logic.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "ag/detail/function_core.h"
#include "concrete.h"
#include "signature_cache.h"

namespace ag::detail {

struct TraceRoot;

// Inlines concrete function `c` into the current trace frame with the tensors of `args` (in
// graph-parameter order) as its inputs: a Function or ConcreteFunction called while another one
// traces. While a tape records in that frame, the call is replayed op by op from its traced
// graph instead (replay_graph), so that the tape records each op (and custom gradients): nested
// Functions under a tape inside a trace, grad of grad.
void inline_into_current_frame(const ConcreteCore& c, std::span<const ArgView> args, std::span<Tensor> outputs);

// One entry of a Function's trace history (the HTML report's "retrace history").
struct TraceEvent {
  enum class Kind : uint8_t { Trace, Evicted, EvictedAll };
  Kind kind = Kind::Trace;
  int64_t number = 0;       // Trace: trace #N of the Function
  std::string signature;    // the concrete function's signature_str()
  std::string reason;       // Trace: why it traced (the AG_LOG=retrace reason)
  double ms = 0;            // Trace: tracing and optimizing time
  std::weak_ptr<const ConcreteCore> fn;
};

class FunctionCore {
 public:
  FunctionCore(FunctionOptions options, FunctionInfo info, std::vector<ParamLayout> params, size_t num_outputs,
               Tracer tracer);
  // With AG_REPORT set, writes this Function's HTML report (report_env.cpp).
  ~FunctionCore();
  FunctionCore(const FunctionCore&) = delete;
  FunctionCore& operator=(const FunctionCore&) = delete;

  void call(std::span<const ArgView> args, std::span<Tensor> outputs);
  std::shared_ptr<ConcreteCore> get_concrete(std::span<const ArgView> args);
  // get_concrete_function() without arguments: the input_signature describes every parameter.
  std::shared_ptr<ConcreteCore> get_concrete_from_input_signature();
  // The concrete function for a call from inside another trace, and its inlining.
  void call_while_tracing(std::span<const ArgView> args, std::span<Tensor> outputs);

  const std::string& name() const { return info_.name; }
  // The traces the Function holds (TensorFlow's experimental_get_tracing_count, the length of its
  // function cache): evicted traces no longer count; stats().traces counts every trace made.
  int64_t tracing_count() const;
  std::vector<std::shared_ptr<ConcreteCore>> concrete_functions() const;
  void evict_all();
  FunctionStats stats() const;
  const FunctionInfo& info() const { return info_; }
  const FunctionOptions& options() const { return options_; }
  // The trace history, oldest first (at most kMaxHistory events: the oldest are dropped).
  std::vector<TraceEvent> history() const;
  static constexpr size_t kMaxHistory = 1000;

 private:
  struct Pending {
    bool done = false;
    std::thread::id owner;  // the thread tracing it
  };

  // Runs the inline cache's entry `hit`, which `guard` holds (counted as an inline hit).
  void run_inline_hit(const hazard::SlotGuard& guard, const SignatureCache::Entry& hit, std::span<const ArgView> args,
                      std::span<Tensor> outputs);
  // A call the inline cache did not serve: builds the key, then the table, else traces.
  [[gnu::noinline]] void call_by_key(std::span<const ArgView> args, std::span<Tensor> outputs);
  // exact: only a concrete function traced for exactly this signature (get_concrete_function);
  // otherwise the most specific compatible one may serve the call.
  std::shared_ptr<ConcreteCore> lookup_or_trace(std::span<const ArgView> args, const KeyBuf& key, bool exact);
  std::shared_ptr<ConcreteCore> find_exact(const KeyBuf& key) const;
  std::shared_ptr<ConcreteCore> trace(const Signature& sig, std::span<const ArgView> args, const std::string& reason);
  // Runs the user's function once into a new graph (verified), in a frame of `root`.
  std::shared_ptr<const Graph> trace_graph(const Signature& sig, std::span<const ArgView> args,
                                           const std::shared_ptr<TraceRoot>& root);
  // Under mu_: the most specific cached concrete function the call fits, or null.
  std::shared_ptr<ConcreteCore> find_compatible(std::span<const ArgView> args) const;
  Signature signature_to_trace(std::span<const ArgView> args, std::string& reason);
  void insert(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn, bool alias);
  // Under mu_: maps a call key to a more general concrete function, within max_aliases().
  void insert_alias(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn);
  size_t max_aliases() const { return 4 * options_.max_cached; }
  void evict_over_capacity();
  void note_trace(const std::string& reason);
  // A call with a signature this Function is tracing on this thread.
  [[noreturn]] void throw_recursion(const Signature& sig) const;
  void record(TraceEvent e);  // under mu_
  void note_hit() {
    const uint32_t h = history_.load(std::memory_order_relaxed);
    if (h) history_.store((h << 1) & 0x3ff, std::memory_order_relaxed);  // racy on purpose: a heuristic
  }

  const FunctionOptions options_;
  const FunctionInfo info_;
  const std::shared_ptr<const std::string> name_ptr_;
  const std::vector<ParamLayout> params_;
  const size_t num_outputs_;
  const Tracer tracer_;
  SignatureRules rules_;
  bool tensor_args_only_ = false;  // every parameter is one ag::Tensor: tensor_args_have_key
  std::shared_ptr<StatCounters> stats_;

  SignatureCache cache_;
  mutable std::mutex mu_;
  std::condition_variable pending_done_;
  std::map<std::vector<uint64_t>, std::shared_ptr<Pending>> pending_;
  std::atomic<int64_t> traces_started_{0};
  std::atomic<uint32_t> history_{0};  // 1 bit per recent call: traced or not
  int64_t traces_noted_ = 0;     // under mu_: calls that traced (the retracing warning's window)
  int64_t traces_in_flight_ = 0;  // under mu_: traces started and not finished (max_traces)
  int warnings_ = 0;
  std::deque<TraceEvent> history_events_;  // under mu_
  bool max_traces_warned_ = false;
};

}  // namespace ag::detail
