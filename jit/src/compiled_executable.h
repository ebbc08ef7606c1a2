// A concrete function's machine code and the call protocol that runs it: arguments and
// preallocated results in, the entry called, results fixed up (views, run-time shapes), errors
// rethrown. Shared by the JIT (backend.cpp: code it compiled or loaded from the disk cache) and by
// code compiled ahead of time and linked into the program (aot.cpp). No LLVM.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "abi.h"
#include "ag/backend.h"
#include "ag/detail/call_stub.h"
#include "call_state.h"
#include "jit_config.h"
#include "plan.h"

namespace ag::jit {

class CompiledExecutable : public Executable, public detail::CallStub {
 public:
  // Plans `graph` (the same plan the code was compiled from: plan_program is deterministic).
  CompiledExecutable(std::shared_ptr<const Graph> graph, const JitConfig& config);

  // The code: `entry`, kept alive by `code` (the JIT's CodeHandle; null for code linked into the
  // program).
  // `uses_call_state`: the code calls a runtime helper that takes the call's context; when it
  // calls none, a call of one result may skip the stub (CallStub::try_run_direct).
  void set_code(std::shared_ptr<const void> code, EntryFn entry, bool from_disk, bool uses_call_state);
  const Program& program() const { return program_; }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override;
  // The cached call's path: the argument views give the inputs' data and dims directly.
  void run_tensor_args(std::span<const detail::ArgView> args, std::span<Tensor> outputs) const override;
  std::string plan_text() const override;
  std::string plan_dot() const override;
  bool loaded_from_disk() const override { return from_disk_; }
  std::pair<int64_t, int64_t> temporaries() const override;

 protected:
  std::shared_ptr<const void> code_;  // shared by the executables rebound() makes
  EntryFn entry_ = nullptr;
  bool from_disk_ = false;
  bool uses_call_state_ = true;

 private:
  static constexpr size_t kInline = 16;
  template <size_t NIN, size_t NOUT, class Input>
  void run_simple(const Input& input, size_t nin, Tensor* outputs) const;
  // The cached call's stub (call_stub.h) for a call of NIN tensor arguments and NOUT results:
  // run_simple with the counts as constants; the constructor picks it for the common counts.
  template <size_t NIN, size_t NOUT>
  static void run_fixed(const detail::CallStub& self, const Tensor* const* args, Tensor* outputs);
  void run_general(std::span<const Tensor> inputs, std::span<Tensor> outputs) const;
  [[noreturn]] static void fail(CallState& st, std::span<Tensor> outputs);

  Program program_;
  std::vector<const void*> consts_;
  bool has_param_slots_ = false;  // TensorArray arguments go to slots
  bool needs_fixup_ = false;      // some result is a view or has a shape known only at run time
  bool simple_ = false;           // run_simple() applies
  size_t num_results_ = 0;
};

}  // namespace ag::jit
