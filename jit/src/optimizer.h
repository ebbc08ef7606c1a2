// The optimization pipeline for JIT modules (O3 for the host CPU, with glibc's libmvec as the
// vector math library) and assembly emission. LLVM: included by engine code only.
#pragma once

#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace ag::jit {

// Runs LLVM's O1/O2/O3 module pipeline (`level`) with `tm` (without a TargetMachine nothing vectorizes) and a
// TargetLibraryInfo that maps exp/log/sin/cos/pow/tanh to libmvec's vector variants.
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int level = 3);
// The module's assembly for `tm` (the module is left as it was compiled).
std::string emit_assembly(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace ag::jit
