// agc's own optimization pipeline (AG_JIT_OPT=2, the default): the function passes of LLVM's O2
// that the code agc emits needs, in O2's order, without O2's interprocedural half. agc's modules
// are an entry and the loop nests, pool workers and kernels it outlined itself, with no calls
// LLVM could inline and no globals to optimize, so the inliner's call-graph walk, IPSCCP,
// attribute inference and their analyses found nothing; and they, with second runs of
// InstCombine, SimplifyCFG and the loop passes, were a third of a training step's optimize
// stage and of the kernel module's (docs/jit.md, "Compile times": agc's pipeline).
//
// Of O2's function passes, those that changed no instruction of agc's code are left out too:
// loop load elimination (its LoopAccessInfo was 7-13% of the optimize stage; agc's loops carry
// no value through memory from one iteration to the next), correlated value propagation, both
// loop deletions, VectorCombine, the LICM before rotation, and the InstCombines after rotation
// and after the second SROA. Checked function by function on the machine code of bench/apps'
// 15 programs and jit_bench's 26 functions: the same code, 15-21% fewer instructions executed
// in the optimize stage (valgrind, a transformer block's, an MLP step's and a Runge-Kutta
// step's modules).
#include "function_pipeline.h"

#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/InferAlignment.h>
#include <llvm/Transforms/Scalar/JumpThreading.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/MemCpyOptimizer.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Scalar/WarnMissedTransforms.h>
#include <llvm/Transforms/Utils/InjectTLIMappings.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>
#include <llvm/Transforms/Vectorize/SLPVectorizer.h>

namespace ag::jit {
namespace {

llvm::SimplifyCFGPass simplify_cfg() { return llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions().convertSwitchRangeToICmp(true)); }

llvm::LICMPass licm(const llvm::PipelineTuningOptions& o, bool speculate) {
  return llvm::LICMPass(o.LicmMssaOptCap, o.LicmMssaNoAccForPromotionCap, speculate);
}

// O2's function simplification: clean-up, loops rotated and their invariants hoisted, induction
// variables canonical, agc's short loops (llvm.loop.unroll.full) unrolled, redundant loads gone.
void add_simplification(llvm::FunctionPassManager& fpm, const llvm::PipelineTuningOptions& o) {
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(simplify_cfg());
  fpm.addPass(llvm::InstCombinePass());
  // Threads a block loop's "whole block or the masked last one" test: the loop then runs the
  // whole blocks and the last block follows it.
  fpm.addPass(llvm::JumpThreadingPass());
  llvm::LoopPassManager rotate;
  rotate.addPass(llvm::LoopRotatePass());
  rotate.addPass(licm(o, /*speculate=*/true));
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(rotate), /*UseMemorySSA=*/true, /*UseBlockFrequencyInfo=*/true));
  fpm.addPass(simplify_cfg());
  llvm::LoopPassManager canonical;
  canonical.addPass(llvm::IndVarSimplifyPass());
  // Only the loops agc marked (LoopUnrolling is off: agc decides which loops unroll).
  canonical.addPass(llvm::LoopFullUnrollPass(2, /*OnlyWhenForced=*/!o.LoopUnrolling, o.ForgetAllSCEVInLoopUnroll));
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(canonical), /*UseMemorySSA=*/false, /*UseBlockFrequencyInfo=*/false));
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::EarlyCSEPass(true));
  // A loop state's copy into the result buffer, stores a later store overwrites.
  fpm.addPass(llvm::MemCpyOptPass());
  fpm.addPass(llvm::DSEPass());
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(licm(o, /*speculate=*/true), /*UseMemorySSA=*/true, /*UseBlockFrequencyInfo=*/false));
}

// O2's optimization half: loops re-rotated, vectorized (with libmvec's variants: InjectTLIMappings),
// straight-line code SLP-vectorized, and the clean-up after them.
void add_vectorization(llvm::FunctionPassManager& fpm, const llvm::PipelineTuningOptions& o) {
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LoopRotatePass(), /*UseMemorySSA=*/false, /*UseBlockFrequencyInfo=*/false));
  fpm.addPass(llvm::InjectTLIMappings());
  fpm.addPass(llvm::LoopVectorizePass(llvm::LoopVectorizeOptions(!o.LoopInterleaving, !o.LoopVectorization)));
  fpm.addPass(llvm::InferAlignmentPass());
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions()
                                        .forwardSwitchCondToPhi(true)
                                        .convertSwitchRangeToICmp(true)
                                        .convertSwitchToLookupTable(true)
                                        .needCanonicalLoops(false)
                                        .hoistCommonInsts(true)
                                        .sinkCommonInsts(true)));
  if (o.SLPVectorization) fpm.addPass(llvm::SLPVectorizerPass());
  fpm.addPass(llvm::InstCombinePass());
  // An unroll agc asked for and LLVM could not do goes to AG_LOG=compile (optimizer.cpp).
  fpm.addPass(llvm::WarnMissedTransformationsPass());
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(licm(o, /*speculate=*/true), /*UseMemorySSA=*/true, /*UseBlockFrequencyInfo=*/false));
  fpm.addPass(simplify_cfg());
}

}  // namespace

llvm::FunctionPassManager agc_function_pipeline(const llvm::PipelineTuningOptions& options) {
  llvm::FunctionPassManager fpm;
  add_simplification(fpm, options);
  add_vectorization(fpm, options);
  return fpm;
}

}  // namespace ag::jit
