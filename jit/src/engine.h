// The process-wide JIT engine: one LLJIT for the host CPU, pooled TargetMachines, runtime helpers
// bound with absoluteSymbols, and a JITDylib per compiled concrete function so that dropping its
// CodeHandle frees its code. The header is LLVM-free (pimpl).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "abi.h"
#include "ag/backend.h"
#include "plan.h"
#include "shared_kernels.h"

namespace ag::jit {

class Engine;

// Where a compile spent its time (AG_LOG=compile prints it).
struct CompileTimes {
  double lower_ms = 0;     // LLVM IR construction and verification
  double optimize_ms = 0;  // the IR pipeline (on the calling thread)
  double codegen_ms = 0;   // instruction selection to object file (on the calling thread)
  double link_ms = 0;      // linking the objects into a JITDylib
  int kernels_apart = 0;   // kernels compiled as a second module (module_split.h), or 0
  double split_ms = 0;     // writing that module's bitcode
  double kernels_optimize_ms = 0;  // its optimization
  double kernels_codegen_ms = 0;   // and its code generation
  double naming_ms = 0;    // naming the kernels by their IR (kernel_names.h)
  int kernels_shared = 0;  // kernels an earlier compile made, which this one calls (shared_kernels.h)
  bool kernels_in_parallel = false;  // the two parts compiled on two threads (either may take either part)
  bool short_pipeline = false;  // the module took the short pipeline (optimize_module)
};


// The machine code of one concrete function; destroying it removes the code from the JIT.
class CodeHandle {
 public:
  CodeHandle(std::shared_ptr<Engine> engine, void* dylib, EntryFn entry, bool uses_call_state, SharedObjects kernels = {});
  ~CodeHandle();
  CodeHandle(const CodeHandle&) = delete;
  CodeHandle& operator=(const CodeHandle&) = delete;
  EntryFn entry() const { return entry_; }
  // Whether the code calls a runtime helper that takes the call's context (reads its CallState).
  bool uses_call_state() const { return uses_call_state_; }

 private:
  std::shared_ptr<Engine> engine_;
  void* dylib_;  // llvm::orc::JITDylib*
  EntryFn entry_;
  bool uses_call_state_;
  SharedObjects kernels_;  // the shared kernels its code calls (shared_kernels.h)
};

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  // The engine for this process (created on first use). Throws ag::Error for a bad AG_JIT_CPU
  // (target.h), InternalError if LLVM cannot target the host.
  static std::shared_ptr<Engine> get();
  ~Engine();

  // Triple, CPU name and features, LLVM version: part of every disk-cache key.
  const std::string& target_id() const;
  // The target_id an engine created now would have (AG_JIT_CPU as set now), without creating
  // one: a compile keys its disk-cache entry while the warm-up thread creates the engine.
  // Throws as get() does for a bad AG_JIT_CPU.
  static std::string target_id_for_environment();
  // The CPU the code is generated for (the host's name, or AG_JIT_CPU).
  const std::string& cpu() const;
  // Lowers, optimizes (at program.config.opt_level) and compiles `program`; with `object`, also returns its disk-
  // cache entry (one object file, or a bundle of two: module_split.h). `parallel`: a module whose
  // kernels compile apart compiles them on a pool thread (else one after the other).
  std::unique_ptr<CodeHandle> compile(const Program& program, const std::string& name, bool parallel,
                                      std::string* object, CompileTimes* times = nullptr);
  // Links a previously compiled disk-cache entry. Throws InternalError when it cannot be linked.
  std::unique_ptr<CodeHandle> load_object(std::string_view object, const std::string& name);
  // Waits kWarmUpDelay, then optimizes and compiles a small module to an object on this thread
  // and on a pool thread, and drops it (warm_up.h): the first real compile of the process then
  // runs warm LLVM code. Thread-safe, like compile(); does nothing once a compile or load has
  // begun. Returns the milliseconds it took (0: skipped).
  double warm_up();
  static constexpr std::chrono::milliseconds kWarmUpDelay{5};
  // Inspection: the module as lowered / after optimization, and its assembly.
  std::string ir(const Program& program, const std::string& name, bool optimized);
  std::string assembly(const Program& program, const std::string& name);
  // The same, from an inspection build: each line tagged with the top-level graph node whose
  // lowering emitted it (lower/node_lines.h); the HTML report links them to the graph.
  Executable::MappedText ir_by_node(const Program& program, const std::string& name, bool optimized);
  Executable::MappedText assembly_by_node(const Program& program, const std::string& name);

  void remove(void* dylib, const SharedObjects& kernels);
  // JITDylibs holding a concrete function's code right now (tests: evicting a concrete function
  // or destroying its Function removes its code).
  int64_t live_functions() const;
  // Compiles whose kernels compiled as a second module, and those of them whose second module
  // compiled on a pool thread (tests: the split and its parallel path ran).
  int64_t split_compiles() const;
  int64_t split_compiles_in_parallel() const;
  // Objects emitted, in this process, by a code generation pipeline that had emitted one before
  // (object_emitter.h; tests: the reuse ran).
  static int64_t reused_codegen_runs();
  // Kernels compiles found already compiled by another and called there, and the objects of
  // shared kernels in the JIT now (shared_kernels.h; tests: the sharing ran, and code leaves).
  int64_t shared_kernel_hits() const;
  int64_t shared_kernel_objects() const;
  struct Impl;

 private:
  Engine();
  std::unique_ptr<Impl> impl_;
};

}  // namespace ag::jit
