// The module Engine::warm_up compiles and drops. LLVM: included by engine code only.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class DataLayout;
class LLVMContext;
class Module;
}  // namespace llvm

namespace ag::jit {

// A small function shaped like agc's code (warm_up.cpp); never linked or run.
std::unique_ptr<llvm::Module> warm_up_module(llvm::LLVMContext& ctx, const llvm::DataLayout& layout,
                                             const std::string& triple);

}  // namespace ag::jit
