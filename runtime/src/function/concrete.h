// ConcreteCore: one traced signature — its graphs, and its executable compiled on first call.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "ag/backend.h"
#include "ag/debugging.h"
#include "ag/detail/call_hooks.h"
#include "ag/detail/call_stub.h"
#include "ag/detail/check_numerics.h"
#include "ag/detail/function_inspection.h"
#include "ag/detail/profiler.h"
#include "ag/detail/tape.h"
#include "signature.h"
#include "striped_counter.h"

namespace ag::detail {

// Counters shared by a Function and its concrete functions.
struct StatCounters {
  std::atomic<int64_t> traces{0}, compiles{0}, disk_hits{0}, evictions{0}, interpreted_calls{0};
  StripedCounter memory_hits;  // cached calls served by a table lookup: no locked instruction
  StripedCounter inline_hits;  // cached calls served by the inline cache (not in memory_hits)
  // Cached calls served by the inline cache that ran the code directly (CallStub::try_run_direct):
  // counted here instead of in inline_hits, so the direct path adds no increment of its own.
  StripedCounter direct_calls;
};

class CallBackward;

// The HTML report sees it only as a ConcreteView (function_inspection.h).
class ConcreteCore final : public ConcreteView, public std::enable_shared_from_this<ConcreteCore> {
 public:
  ConcreteCore(std::string name, Signature signature, std::shared_ptr<const Graph> traced,
               std::shared_ptr<const Graph> optimized, std::optional<bool> jit, std::shared_ptr<StatCounters> stats,
               std::string dump_prefix, bool tiered = false);

  const std::string& name() const override { return name_; }
  const Signature& signature() const { return signature_; }
  const Graph& graph() const { return *graph_; }
  const std::shared_ptr<const Graph>& graph_ptr() const override { return graph_; }
  // The graph as traced: what gradients replay (it keeps custom gradients; the optimized one runs).
  const Graph& traced_graph() const override { return *traced_; }
  // f(x: TensorSpec(shape=(2,), dtype=int32)) -> TensorSpec(shape=(2,), dtype=int32)
  std::string signature_str() const override;

  // What runs a call: the compiled code, compiled on first use, once, even under concurrent
  // calls; with tiered execution, the interpreter until the background compile is done.
  const Executable& executable() {
    if (const Executable* e = exe_.load(std::memory_order_acquire)) [[likely]]
      return *e;
    return tiered_ ? interpreter_while_compiling() : compile();
  }
  // The compiled code, waiting for (or doing) the compile: inspection (llvm_ir, assembly).
  const Executable& compiled_executable() {
    if (const Executable* e = exe_.load(std::memory_order_acquire)) return *e;
    return compile();
  }
  // The compiled code if it is compiled, else null (the HTML report, which need not compile).
  const Executable* compiled_if_ready() const { return exe_.load(std::memory_order_acquire); }
  bool is_compiled() const override { return compiled_if_ready() != nullptr; }
  void compile_now() override { (void)compiled_executable(); }
  // The compiled code's texts: null when not compiled, or when not captured yet and `make` is
  // false. With AG_REPORT they are captured right after the compile, so a report written at
  // exit (when LLVM's own statics may be gone) never runs the backend.
  std::shared_ptr<const CodeTexts> code_texts(bool make) override;
  // The background compiler's job (background_compiler.cpp); a failure is logged and the
  // concrete function stays on the interpreter.
  void compile_in_background();
  // Runs with the tensor arguments of `args` (in order) as inputs. Inline: a cached call's
  // common case (compiled, every argument one Tensor, no tape on the thread, no call hook:
  // call_hooks.h) goes straight to the executable; the rest is run_any's.
  void run(std::span<const ArgView> args, std::span<Tensor> outputs) {
    if (!tapes_alive() && !call_hooks_on()) [[likely]] {
      if (const CallStub* s = stub_.load(std::memory_order_acquire)) [[likely]]
        return call_stub(*s, args, outputs.data());
      const Executable* e = exe_.load(std::memory_order_acquire);
      if (e && tensor_args_only_) return e->run_tensor_args(args, outputs);
    }
    run_any(args, outputs);
  }
  // The compiled code's stub (call_stub.h) when it runs this call as run() would: compiled,
  // every argument one Tensor, no tape on the thread, no call hook. Else null.
  const CallStub* direct_stub() const {
    if (tapes_alive() || call_hooks_on()) [[unlikely]]
      return nullptr;
    return stub_.load(std::memory_order_acquire);
  }
  [[gnu::noinline]] void run_any(std::span<const ArgView> args, std::span<Tensor> outputs);
  // The concrete function that runs `args`: this one when its Variable arguments are the Variables
  // it was traced with, else this trace bound to the call's Variables (same dtypes and shapes;
  // made once per set of Variables, sharing the compiled code, the most recent kMaxBound kept).
  // `hold` keeps a bound one alive for the call (another thread may drop it from the list).
  ConcreteCore& bound_to(std::span<const ArgView> args, std::shared_ptr<ConcreteCore>& hold);
  // ag::debugging::compare_with_eager (compare_with_eager.cpp): runs `args` compiled and with the
  // eager kernels node by node and compares every value; `outputs` (if not empty) get the
  // compiled results.
  debugging::EagerComparison compare_with_eager(std::span<const ArgView> args, const debugging::Tolerance& tol,
                                                std::span<Tensor> outputs);
  // Checks a call against this signature (ConcreteFunction::operator()).
  void check_call(std::span<const ArgView> args) const;

 private:
  const Executable& compile(bool background = false);
  // enable_check_numerics(): the graph with checks (insert_numeric_checks), compiled on first use.
  const Executable& checked_executable();
  // The compiled code of `graph` (or the interpreter), logged; `variant` tells the log which.
  std::unique_ptr<Executable> build_executable(std::shared_ptr<const Graph> graph, bool background,
                                               const std::string& dump_prefix, const char* variant);
  bool binds(std::span<const ArgView> args) const;  // args' Variables are this one's
  std::shared_ptr<ConcreteCore> make_bound(std::span<const ArgView> args);
  const Executable& interpreter_while_compiling();
  Executable& tier_interpreter();  // tiered: made on first use

  std::string name_;
  Signature signature_;
  std::shared_ptr<const Graph> traced_;
  std::shared_ptr<const Graph> graph_;
  std::optional<bool> jit_;  // FunctionOptions::jit_compile
  std::shared_ptr<StatCounters> stats_;
  std::string dump_prefix_;
  std::mutex compile_mu_;
  std::unique_ptr<Executable> exe_owned_;
  std::atomic<const Executable*> exe_{nullptr};
  // exe_'s stub, set with it when the calls of this signature can take it (every argument one
  // Tensor, the executable has one): publish().
  std::atomic<const CallStub*> stub_{nullptr};
  void publish(const Executable* e);
  struct Probe;  // compare_with_eager's graph (every value a result) and its code
  const Probe& probe();
  std::shared_ptr<const Probe> probe_;
  std::unique_ptr<Executable> checked_owned_;  // checked_executable()
  std::atomic<const Executable*> checked_exe_{nullptr};
  const bool tiered_;
  std::once_flag interpreter_once_;
  std::unique_ptr<Executable> interpreter_;  // tiered: runs calls until exe_ is set
  std::atomic<bool> compile_queued_{false};
  bool reads_variables_ = false;  // a floating-point Variable (a tape watches its reads)
  // The floating-point tensors the trace captured as constants: a tape may watch one (in
  // TensorFlow captures are inputs); then a call under the tape runs op by op.
  std::vector<Tensor> captured_;
  bool one_op_under_tape_ = false;  // a call under a tape is recorded as one op (else op by op)
  bool tensor_args_only_ = false;   // every argument is one Tensor: Executable::run_tensor_args
  std::mutex texts_mu_;
  std::shared_ptr<const CodeTexts> texts_;
  std::shared_ptr<const CallBackward> backward_;  // made on the first call under a tape
  const bool has_variable_args_;
  static constexpr size_t kMaxBound = 8;
  std::mutex bound_mu_;
  std::vector<std::shared_ptr<ConcreteCore>> bound_;  // bound_to's, most recent first
  const std::shared_ptr<const CallBackward>& backward();
};

}  // namespace ag::detail
