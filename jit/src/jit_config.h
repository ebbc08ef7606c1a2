// JitConfig: every setting that changes the code the JIT generates, read from the environment
// once per compile. The lowering and the compile read this snapshot, never the environment, and
// key() is part of the disk-cache key: an object compiled under other settings is never loaded.
#pragma once

#include <cstdint>
#include <string>

namespace ag::jit {

struct JitConfig {
  // AG_JIT_OPT: the IR optimization level (0 = none and a fast instruction selector, 1 and 3 =
  // LLVM's O1 and O3 pipelines, 2 = agc's: O2's function passes without its interprocedural half,
  // function_pipeline.h). The default is 2: no workload ran faster at O3, O3 compiled larger
  // graphs slower, and agc's pipeline gave the code LLVM's O2 gave in 0.77x the time (docs/jit.md,
  // "Compile times").
  int opt_level = 2;
  // AG_JIT_ROLL: "auto" (outer loops stay loops above kRolledLoopNests loop nests), "1", "0".
  std::string roll = "auto";
  // AG_JIT_VECTOR_LOOPS=0: every loop stays scalar, for LLVM's vectorizer (the reference the
  // tests compare against, bit for bit).
  bool vector_loops = true;
  // AG_JIT_SPLIT=0: a module's kernels compile in the module, not as a second one.
  bool split_kernels = true;
  // AG_JIT_SHARE_KERNELS=0: the kernels of a split module are compiled for it alone, not looked
  // up among those the process compiled before and shared (shared_kernels.h). Not in key(): it
  // names symbols, not code, and a disk-cache entry links alone either way.
  bool share_kernels = true;
  // AG_JIT_PACK_WEIGHTS=0: a staged loop's products read their loop-invariant B as it is, packed
  // by the GEMM in every iteration, instead of packed once before the loop (matmul_forms.h).
  bool pack_loop_weights = true;
  // AG_JIT_PULL_SEGMENTS=0: a staged loop's segment sums push edge by edge, as outside loops,
  // instead of pulling by segment from an edge order made before the loop (segment_pulls.h).
  bool pull_segments = true;
  // AG_NONTEMPORAL (detail::nontemporal_setting): -1 auto, 0 never, else a size in bytes; with
  // auto, the last-level cache size decides.
  int64_t nontemporal = -1;
  int64_t last_level_cache_bytes = 0;
  // The eager kernels' instruction-set level: compiled code calls its GEMM.
  std::string kernel_isa;
  // AG_JIT_TEST_MISCOMPILE=<op> (graph text's name, "Tanh"): the tests' deliberate bug, which
  // adds 1 to every float value of that op in compiled code, for compare_with_eager to find.
  std::string test_miscompile;
  // Compiled while an ag::profiler profile runs: each loop nest, product and runtime call of the
  // function's body reports its time to the profile (agc_rt_profile_node), as an event named by
  // its node and line. Recorded only while a profile runs.
  bool profile = false;

  // The settings now; ValueError naming a variable with a bad value.
  static JitConfig from_environment();
  // Whether a program of `loop_nests` loop nests keeps its outer loops rolled.
  bool rolled(int64_t loop_nests) const;
  // Whether a result of `bytes` bytes is written with streaming stores.
  bool streams(int64_t bytes) const;
  // Every field, as the disk-cache key takes it.
  std::string key() const;
};

// Above this many loop nests (Program::loop_nests) a program's outer loops stay loops (auto).
constexpr int64_t kRolledLoopNests = 48;

}  // namespace ag::jit
