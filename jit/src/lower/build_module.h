// Builds the LLVM module of a planned concrete function (entry point `agc_entry`), verified.
#pragma once

#include <memory>
#include <string>

#include "../plan.h"

namespace llvm {
class DataLayout;
class LLVMContext;
class Module;
}  // namespace llvm

namespace ag::jit {

// Throws InternalError when the module does not verify (a lowering bug). vector_bytes: the
// width of the target's widest vector registers (16, 32 or 64), for kernels agc vectorizes itself.
// node_lines: an inspection build whose instructions carry their graph node (node_lines.h).
std::unique_ptr<llvm::Module> build_module(const Program& program, llvm::LLVMContext& ctx, const llvm::DataLayout& layout,
                                           const std::string& triple, int vector_bytes, const std::string& name,
                                           bool node_lines = false);

}  // namespace ag::jit
