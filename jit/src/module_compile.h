// How one lowered module becomes objects (docs/jit.md, "Two threads per compile" and "Kernels
// shared across compiles"): optimized and compiled whole; or split, its kernels named by their IR,
// those another compile made taken from agc.kernels, the rest compiled as a second module on a
// pool thread and shared in turn. LLVM: included by engine code only.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine.h"
#include "jit_config.h"
#include "shared_kernels.h"
#include "target_machine_pool.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace ag::jit {

// Whether the module took the short pipeline (optimize_module); level 0 optimizes nothing.
bool optimize_at(llvm::Module& m, llvm::TargetMachine& tm, int level);

class ModuleCompiler {
 public:
  ModuleCompiler(TargetMachinePool& machines, SharedKernels& shared, std::string target_id)
      : machines_(machines), shared_(shared), target_id_(std::move(target_id)) {}

  // A module's code: the objects to link into its function's JITDylib (its own; with its kernels'
  // when they are not shared), and the shared kernels it calls.
  struct Objects {
    std::vector<std::string> linked;
    std::optional<SharedKernels::Claim> claim;
  };
  // `parallel`: a second module compiles on a pool thread (else after the first).
  Objects compile(llvm::Module& mod, const JitConfig& config, bool parallel, CompileTimes& times);

  // The module as compiled, for inspection: `m` optimized and, if its kernels compile apart,
  // their module (in a context of its own) optimized too, with the machine that did it.
  struct Inspected {
    TargetMachinePool::Lease lease;
    std::unique_ptr<llvm::LLVMContext> ctx;
    std::unique_ptr<llvm::Module> kernels;
  };
  Inspected optimize_for_inspection(llvm::Module& m, const JitConfig& config);

  // Compiles whose kernels compiled as a second module, and those of them on two threads.
  int64_t split_compiles() const { return split_.load(); }
  int64_t split_compiles_in_parallel() const { return split_in_parallel_.load(); }

 private:
  std::vector<std::string> compile_split(llvm::Module& mod, const std::vector<std::string>& names, const JitConfig& config,
                                         bool parallel, CompileTimes& times, std::optional<SharedKernels::Claim>& claim);
  TargetMachinePool& machines_;
  SharedKernels& shared_;
  const std::string target_id_;
  std::atomic<int64_t> split_{0}, split_in_parallel_{0};
};

}  // namespace ag::jit
