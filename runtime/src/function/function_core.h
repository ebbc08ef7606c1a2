// FunctionCore: a Function's cache of concrete functions and what a call does on a miss (one
// trace per signature under concurrency, generalized signatures, max_traces). The tracing itself
// is FunctionTracer's (function_tracer.h), the history and retracing warning TraceHistory's
// (trace_history.h); the HTML report sees it only as a FunctionView (function_inspection.h).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "ag/detail/function_core.h"
#include "ag/detail/function_inspection.h"
#include "concrete.h"
#include "function_tracer.h"
#include "signature_cache.h"
#include "trace_history.h"

namespace ag::detail {

class FunctionCore final : public FunctionView {
 public:
  FunctionCore(FunctionOptions options, FunctionInfo info, std::vector<ParamLayout> params, size_t num_outputs,
               Tracer tracer);
  // With AG_REPORT set, writes this Function's HTML report (report_env.cpp).
  ~FunctionCore();
  FunctionCore(const FunctionCore&) = delete;
  FunctionCore& operator=(const FunctionCore&) = delete;

  void call(std::span<const ArgView> args, std::span<Tensor> outputs);
  // call() for N Tensor parameters given by address (call_tensor_function).
  template <size_t N>
  void call_tensors(const Tensor* const* args, std::span<Tensor> outputs);
  std::shared_ptr<ConcreteCore> get_concrete(std::span<const ArgView> args);
  // get_concrete_function() without arguments: the input_signature describes every parameter.
  std::shared_ptr<ConcreteCore> get_concrete_from_input_signature();
  // The concrete function for a call from inside another trace, and its inlining.
  void call_while_tracing(std::span<const ArgView> args, std::span<Tensor> outputs);

  const std::string& name() const override { return info_.name; }
  // The traces the Function holds (TensorFlow's experimental_get_tracing_count, the length of its
  // function cache): evicted traces no longer count; stats().traces counts every trace made.
  int64_t tracing_count() const;
  std::vector<std::shared_ptr<ConcreteCore>> concrete_functions() const;
  std::vector<std::shared_ptr<ConcreteView>> concrete_views() const override;
  void evict_all();
  FunctionStats stats() const override;
  const FunctionInfo& info() const { return info_; }
  const FunctionOptions& options() const { return options_; }
  // The trace history, oldest first (at most TraceHistory::kMaxEvents: the oldest are dropped).
  std::vector<TraceEvent> history() const override { return history_.events(); }

 private:
  struct Pending {
    bool done = false;
    std::thread::id owner;  // the thread tracing it
  };

  // call() with an input_signature or arguments that are not all tensors.
  [[gnu::noinline]] void call_general(std::span<const ArgView> args, std::span<Tensor> outputs);
  // Runs `fn` for a cached call, then clears the hazard slot `held` (which keeps `fn` alive).
  [[gnu::noinline]] static void run_held(ConcreteCore& fn, std::span<const ArgView> args, std::span<Tensor> outputs,
                                         std::atomic<const void*>* held);
  // call_tensors' other cases, with the tensors as ArgViews: call(), or the inline entry's
  // function `fn` (held by the caller's hazard slot) when it has no stub.
  [[gnu::noinline]] void call_tensors_as_views(const Tensor* const* args, size_t n, std::span<Tensor> outputs);
  [[gnu::noinline]] static void run_tensors(ConcreteCore& fn, const Tensor* const* args, size_t n,
                                            std::span<Tensor> outputs);
  // This thread's inline cache entry when the call's `n` tensors (`tensor_at(i)`) have its key,
  // noted in the history and held by `guard`; else null, `guard` empty. The caller counts the
  // hit (note_inline_hit, or direct_calls).
  template <class TensorAt>
  const SignatureCache::Entry* inline_hit(hazard::SlotGuard& guard, size_t n, TensorAt&& tensor_at);
  void note_inline_hit(const hazard::SlotGuard& guard);  // counts a call the inline cache served
  // Runs the inline cache's entry `hit`, which `guard` holds (counted as an inline hit).
  void run_inline_hit(const hazard::SlotGuard& guard, const SignatureCache::Entry& hit, std::span<const ArgView> args,
                      std::span<Tensor> outputs);
  // A call the inline cache did not serve: builds the key, then the table, else traces.
  [[gnu::noinline]] void call_by_key(std::span<const ArgView> args, std::span<Tensor> outputs);
  // exact: only a concrete function traced for exactly this signature (get_concrete_function);
  // otherwise the most specific compatible one may serve the call.
  std::shared_ptr<ConcreteCore> lookup_or_trace(std::span<const ArgView> args, const KeyBuf& key, bool exact);
  std::shared_ptr<ConcreteCore> find_exact(const KeyBuf& key) const;
  // Under mu_: the most specific cached concrete function the call fits, or null.
  std::shared_ptr<ConcreteCore> find_compatible(std::span<const ArgView> args) const;
  Signature signature_to_trace(std::span<const ArgView> args, std::string& reason);
  void insert(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn, bool alias);
  // Under mu_: maps a call key to a more general concrete function, within max_aliases().
  void insert_alias(const KeyBuf& key, std::shared_ptr<ConcreteCore> fn);
  size_t max_aliases() const { return 4 * options_.max_cached; }
  void evict_over_capacity();
  // A trace's bookkeeping once it succeeded: into the table, retire the aliases it may serve
  // better, evict over capacity, the history (under mu_).
  void publish(const KeyBuf& key, const KeyBuf& sig_key, bool exact, const std::shared_ptr<ConcreteCore>& fn,
               const std::string& reason, double ms);

  const FunctionOptions options_;
  const FunctionInfo info_;
  const std::vector<ParamLayout> params_;
  SignatureRules rules_;
  bool tensor_args_only_ = false;  // every parameter is one ag::Tensor: tensors_have_key
  bool inline_tensor_calls_ = false;  // tensor_args_only_ and no input_signature: call()'s own path
  std::shared_ptr<StatCounters> stats_;
  FunctionTracer tracer_;
  TraceHistory history_;

  SignatureCache cache_;
  mutable std::mutex mu_;
  std::condition_variable pending_done_;
  std::map<std::vector<uint64_t>, std::shared_ptr<Pending>> pending_;
  int64_t traces_in_flight_ = 0;  // under mu_: traces started and not finished (max_traces)
  bool max_traces_warned_ = false;
};

}  // namespace ag::detail
