// A TargetMachine's code generation pipeline, built once and run on module after module. Building
// it (LLVMTargetMachine::addPassesToEmitMC: ~150 legacy passes scheduled one by one, each asking
// for its analyses) and tearing it down was 28% of the code generation of a small module and 5%
// of a large one, every compile (valgrind: W5's power entry, a transformer block). The pipeline
// is made to run again: the MachineModuleInfo pass resets its MCContext when a run ends and the
// AsmPrinter finishes and resets its object streamer, which writes into buffer_, emptied before
// each run. One emitter per TargetMachine, and a TargetMachine serves one compile at a time
// (target_machine_pool.h). AG_JIT_REUSE_CODEGEN=0 builds a pipeline per module instead (a
// debugging switch; the objects are the same bytes: CodegenReuse tests). LLVM: included by
// engine code only.
#pragma once

#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace ag::jit {

class ObjectEmitter {
 public:
  // Throws InternalError when the target cannot emit objects.
  explicit ObjectEmitter(llvm::TargetMachine& tm);
  ObjectEmitter(const ObjectEmitter&) = delete;
  ObjectEmitter& operator=(const ObjectEmitter&) = delete;

  // `m`'s object file (optimized or not: only code generation runs here).
  std::string emit(llvm::Module& m);

  // Whether compiles reuse a machine's pipeline (AG_JIT_REUSE_CODEGEN, read at every compile).
  static bool reuse();
  // Objects emitted by a pipeline that had emitted one before, in this process.
  static int64_t reused_runs();

 private:
  llvm::SmallVector<char, 0> buffer_;
  llvm::raw_svector_ostream out_{buffer_};
  llvm::legacy::PassManager pipeline_;
  int64_t runs_ = 0;
};

// `m`'s object file from a pipeline built for it alone.
std::string emit_object_once(llvm::TargetMachine& tm, llvm::Module& m);

}  // namespace ag::jit
