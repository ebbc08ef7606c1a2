// agc's pipeline (the default) or LLVM's O1/O3, with the target's TargetMachine and libmvec vector
// math; assembly printing.
#include "optimizer.h"

#include "function_pipeline.h"

#include "ag/detail/log.h"

#include <fmt/format.h>
#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/MergeFunctions.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ag::jit {
namespace {

// A loop transformation that metadata asked for and LLVM could not do ("loop not unrolled": a
// short loop's llvm.loop.unroll.full that SimplifyCFG moved onto the staged While around it when
// it merged their latches) is not the user's business: LLVM printed it to stderr as a warning
// with no location. It goes to AG_LOG=compile; other diagnostics keep LLVM's handling.
struct MissedTransformationsToLog : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    if (info.getKind() != llvm::DK_OptimizationFailure) return false;
    if (detail::log_enabled(detail::LogTopic::Compile)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      llvm::DiagnosticPrinterRawOStream printer(os);
      info.print(printer);
      detail::log_line("agc: compile: LLVM: " + os.str());
    }
    return true;
  }
};

// glibc's libmvec variants the vectorizers may call, built for the target: the SSE ones ('b':
// 4 floats, 2 doubles) always, the AVX2 ones ('d': 8 floats, 4 doubles) only when the target
// has AVX2. LLVM's own LIBMVEC_X86 table offers both whatever the target, and the SLP vectorizer
// takes it at its word: x86-64-v2 code then called _ZGVdN8v_sinf with an 8-float vector split
// across two SSE registers — wrong values on an AVX2 machine, SIGILL on an SSE one. The table
// also adds tanh and the functions glibc 2.35 added (erf, log1p, the inverse and hyperbolic
// trigonometric functions, atan2...), which LLVM 19's lacks.
struct VectorLibrary {
  std::deque<std::string> names;  // owns the strings the VecDescs point to (stable addresses)
  std::vector<llvm::VecDesc> descs;
};

VectorLibrary vector_library(bool avx2) {
  struct Fn {
    const char* libm;       // the double variant's name; float adds "f"
    const char* intrinsic;  // "llvm.exp" (".f32"/".f64" added), or nullptr
    bool binary;
  };
  static constexpr Fn kFns[] = {
      {"sin", "llvm.sin", false}, {"cos", "llvm.cos", false}, {"exp", "llvm.exp", false}, {"log", "llvm.log", false},
      {"pow", "llvm.pow", true},  {"tanh", nullptr, false},   {"erf", nullptr, false},     {"erfc", nullptr, false},
      {"log1p", nullptr, false},  {"expm1", nullptr, false},  {"tan", nullptr, false},     {"atan", nullptr, false},
      {"asin", nullptr, false},   {"acos", nullptr, false},   {"sinh", nullptr, false},    {"cosh", nullptr, false},
      {"asinh", nullptr, false},  {"acosh", nullptr, false},  {"atanh", nullptr, false},   {"atan2", nullptr, true}};
  VectorLibrary lib;
  auto keep = [&](std::string s) -> const char* { return lib.names.emplace_back(std::move(s)).c_str(); };
  for (const Fn& f : kFns) {
    const std::string params = f.binary ? "vv" : "v";
    for (bool is_float : {true, false}) {
      const std::string libm = std::string(f.libm) + (is_float ? "f" : "");
      for (char isa : {'b', 'd'}) {
        if (isa == 'd' && !avx2) continue;
        const unsigned vf = (isa == 'b' ? 2u : 4u) * (is_float ? 2u : 1u);
        const char* vector = keep(fmt::format("_ZGV{}N{}{}_{}", isa, vf, params, libm));
        const char* abi = keep(fmt::format("_ZGV_LLVM_N{}{}", vf, params));
        lib.descs.push_back({keep(libm), vector, llvm::ElementCount::getFixed(vf), false, abi});
        if (f.intrinsic)
          lib.descs.push_back({keep(fmt::format("{}.{}", f.intrinsic, is_float ? "f32" : "f64")), vector,
                               llvm::ElementCount::getFixed(vf), false, abi});
      }
    }
  }
  return lib;
}

// The library info of a target: its triple's, with the vector math above. Built once per
// (triple, AVX2 or not) in a process, as the VecDescs' strings must outlive it; building it for
// each compile (some 300 names formatted, then sorted) was 5% of a small module's optimize stage.
const llvm::TargetLibraryInfoImpl& library_info(const std::string& triple, bool avx2) {
  struct Info {
    VectorLibrary vector_math;
    llvm::TargetLibraryInfoImpl impl;
  };
  static std::mutex mu;
  static std::map<std::pair<std::string, bool>, std::unique_ptr<Info>> built;
  const std::lock_guard lock(mu);
  std::unique_ptr<Info>& info = built[{triple, avx2}];
  if (!info) {
    info = std::make_unique<Info>(Info{vector_library(avx2), llvm::TargetLibraryInfoImpl(llvm::Triple(triple))});
    info->impl.addVectorizableFunctions(info->vector_math.descs);
  }
  return info->impl;
}

// The function an IR unit the pass manager hands a pass belongs to (null for a module or an SCC).
const llvm::Function* function_of(const llvm::Any& ir) {
  if (const auto* f = llvm::any_cast<const llvm::Function*>(&ir)) return *f;
  if (const auto* l = llvm::any_cast<const llvm::Loop*>(&ir)) return (*l)->getHeader()->getParent();
  return nullptr;
}

// Whether `bb` calls one of agc's runtime helpers or kernels (agc_rt_*, agc.gemm.*): functions
// LLVM knows nothing of, so a loop that calls one is neither vectorized nor computed in closed
// form, and no load is hoisted across the call.
bool calls_agc(const llvm::BasicBlock& bb) {
  for (const llvm::Instruction& inst : bb)
    if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
      if (const llvm::Function* callee = call->getCalledFunction(); callee && callee->getName().starts_with("agc"))
        return true;
  return false;
}

// Whether the default pipeline has nothing to do in `f` but cost its own overhead: each of its
// loops (if any) calls agc code. Loop-free code has nothing to vectorize, unroll or hoist.
bool nothing_to_optimize(const llvm::Function& f) {
  bool forward = true;  // blocks that only branch forward in their order: no loop, no analysis needed
  llvm::SmallPtrSet<const llvm::BasicBlock*, 32> seen;
  for (const llvm::BasicBlock& bb : f) {
    seen.insert(&bb);
    for (const llvm::BasicBlock* succ : llvm::successors(&bb)) forward = forward && !seen.contains(succ);
  }
  if (forward) return true;
  const llvm::DominatorTree dt(const_cast<llvm::Function&>(f));
  const llvm::LoopInfo loops(dt);
  for (const llvm::Loop* top : loops)
    for (const llvm::Loop* loop : llvm::depth_first(top))
      if (std::none_of(loop->block_begin(), loop->block_end(), [](const llvm::BasicBlock* bb) { return calls_agc(*bb); }))
        return false;
  return true;
}

// Whether every function the default pipeline would optimize (every defined one not
// emitted-optimized) has nothing for it to do. The tanh chain's module is such: an entry that
// hands agc's own vector loop to the pool; so is W1's: an entry whose loop calls the kernel.
bool short_pipeline_suffices(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (!f.isDeclaration() && !f.hasFnAttribute(kEmittedOptimized) && !nothing_to_optimize(f)) return false;
  return true;
}

}  // namespace

void mark_emitted_optimized(llvm::Function& f) { f.addFnAttr(kEmittedOptimized); }

bool optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int level) {
  m.getContext().setDiagnosticHandler(std::make_unique<MissedTransformationsToLog>());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  // agc decides which loops unroll: its short innermost counted loops carry llvm.loop.unroll.full
  // (Codegen::loop_latch) and LLVM's unrollers touch nothing else. Their own choices (partial
  // unrolling of long loops, full unrolling of short outer ones) were half of a transformer
  // block's compile time and made none of bench/apps faster (docs/jit.md, "Compile times").
  options.LoopUnrolling = false;
  // Functions marked emitted-optimized skip every optional pass, as optnone functions do (but
  // their code generation is not O0's).
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback([](llvm::StringRef, llvm::Any ir) {
    const llvm::Function* f = function_of(ir);
    return !(f && f->hasFnAttribute(kEmittedOptimized));
  });
  llvm::PassBuilder pb(&tm, options, std::nullopt, &instrumentation);

  const llvm::TargetLibraryInfoImpl& tlii = library_info(m.getTargetTriple(), tm.getMCSubtargetInfo()->checkFeatures("+avx2"));
  // Registered before the defaults, so the vectorizer sees this TLI.
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });

  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  const bool short_pipeline = short_pipeline_suffices(m);
  if (short_pipeline) {
    // The always-inliner (for callers that ask for it), then the function passes that
    // clean up what the emitter writes (allocas, repeated loads, constant expressions,
    // branches). The O2 pipeline only cost time on the tanh chain's module and W1's, with
    // nothing to do (docs/performance.md, "Measured decisions": short pipeline).
    mpm.addPass(llvm::AlwaysInlinerPass());
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.addPass(llvm::EarlyCSEPass());
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  } else {
    // Identical loop nests (n-body's forces before its loop and in it) are outlined into
    // identical functions (unnamed_addr: parallel_loops.cpp): merged before anything optimizes
    // them, they are optimized and compiled once.
    mpm.addPass(llvm::MergeFunctionsPass());
    if (level == 2) {
      // agc's pipeline: O2's function passes without its interprocedural half
      // (function_pipeline.cpp; docs/jit.md, "Compile times").
      mpm.addPass(llvm::AlwaysInlinerPass());
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(agc_function_pipeline(options)));
    } else {
      mpm.addPass(pb.buildPerModuleDefaultPipeline(level <= 1 ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O3));
    }
  }
  mpm.run(m, mam);
  return short_pipeline;
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
