// O3 pipeline with the host TargetMachine and libmvec vector math; assembly printing.
#include "optimizer.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace ag::jit {
namespace {

// LLVM 19's libmvec table has no tanh; glibc >= 2.35 ships its SSE and AVX2 variants.
const llvm::VecDesc kTanhVariants[] = {
    {"tanhf", "_ZGVbN4v_tanhf", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"},
    {"tanhf", "_ZGVdN8v_tanhf", llvm::ElementCount::getFixed(8), false, "_ZGV_LLVM_N8v"},
    {"tanh", "_ZGVbN2v_tanh", llvm::ElementCount::getFixed(2), false, "_ZGV_LLVM_N2v"},
    {"tanh", "_ZGVdN4v_tanh", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"},
};

}  // namespace

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  options.LoopUnrolling = true;
  llvm::PassBuilder pb(&tm, options);

  const llvm::Triple triple(m.getTargetTriple());
  llvm::TargetLibraryInfoImpl tlii(triple);
  tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  tlii.addVectorizableFunctions(kTanhVariants);
  // Registered before the defaults, so the vectorizer sees this TLI.
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });

  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  const llvm::OptimizationLevel o = level <= 1 ? llvm::OptimizationLevel::O1
                                   : level == 2 ? llvm::OptimizationLevel::O2
                                                : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(o);
  mpm.run(m, mam);
}

std::string emit_assembly(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) return "; no assembly printer\n";
  pm.run(m);
  return std::string(text.str());
}

}  // namespace ag::jit
