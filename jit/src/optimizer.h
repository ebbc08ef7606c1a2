// The optimization pipeline for JIT modules (agc's own at the default level 2, LLVM's O1 or O3
// otherwise; glibc's libmvec as the vector math library) and assembly emission. LLVM: included by
// engine code only.
#pragma once

#include <string>

namespace llvm {
class Function;
class Module;
class TargetMachine;
}  // namespace llvm

namespace ag::jit {

// A function attribute: agc emitted this function as the code it wants (the matmul kernels:
// register-blocked vector code, loops already as they should stay), so the IR optimizer skips it
// and only the code generator works on it. LLVM's O2 pipeline spent compile time on the
// [8,32]x[32,32] float kernel to make it larger, and on the 10x10x10 int32 one to leave it as it
// was (docs/performance.md, "Measured decisions": emitted-optimized kernels).
inline constexpr const char* kEmittedOptimized = "agc-emitted-optimized";
void mark_emitted_optimized(llvm::Function& f);

// Runs agc's pipeline (`level` 2: O2's function passes, function_pipeline.h) or LLVM's O1/O3
// module pipeline with `tm` (without a TargetMachine nothing vectorizes) and a TargetLibraryInfo
// that maps exp/log/sin/cos/pow/tanh to libmvec's vector variants. A module
// where that pipeline has nothing to do (every optimizable function loop-free, or each of its
// loops calling agc code: nothing to vectorize, unroll or hoist) gets a short clean-up pipeline
// instead (docs/jit.md, "Compile times"); returns true then.
bool optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int level = 3);
// The module's assembly for `tm` (the module is left as it was compiled).
std::string emit_assembly(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace ag::jit
