// agc's optimization pipeline for its modules at the default level: LLVM's O2 function passes in
// O2's order, without O2's interprocedural passes (function_pipeline.cpp says why). LLVM: included
// by optimizer.cpp only.
#pragma once

#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>

namespace ag::jit {

llvm::FunctionPassManager agc_function_pipeline(const llvm::PipelineTuningOptions& options);

}  // namespace ag::jit
