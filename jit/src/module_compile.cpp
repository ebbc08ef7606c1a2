// A module's objects (module_compile.h): whole, or split into two modules that compile on two
// threads, with the kernels shared across compiles taken from agc.kernels.
#include "module_compile.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <future>
#include <thread>

#include "ag/detail/parallel.h"
#include "kernel_names.h"
#include "llvm_errors.h"
#include "module_split.h"
#include "optimizer.h"

namespace ag::jit {

bool optimize_at(llvm::Module& m, llvm::TargetMachine& tm, int level) { return level > 0 && optimize_module(m, tm, level); }

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The kernels that compile as a second module (module_split.h); none with AG_JIT_SPLIT=0.
std::vector<std::string> kernels_apart(llvm::Module& m, const JitConfig& config) {
  if (!config.split_kernels) return {};
  return second_part_functions(m);
}

// One module's optimization and code generation, with a pooled machine of its level.
std::string compile_part(llvm::Module& m, TargetMachinePool& machines, int level, double& optimize_ms, double& codegen_ms,
                         bool* short_pipeline = nullptr) {
  auto lease = take(machines.take(level), "target machine");
  const auto t0 = std::chrono::steady_clock::now();
  const bool took_short = optimize_at(m, *lease.tm, level);
  if (short_pipeline) *short_pipeline = took_short;
  optimize_ms = ms_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  std::string object = lease.object(m);
  codegen_ms = ms_since(t1);
  return object;
}

}  // namespace

ModuleCompiler::Objects ModuleCompiler::compile(llvm::Module& mod, const JitConfig& config, bool parallel, CompileTimes& times) {
  const std::vector<std::string> names = kernels_apart(mod, config);
  if (names.empty())
    return {{compile_part(mod, machines_, config.opt_level, times.optimize_ms, times.codegen_ms, &times.short_pipeline)}, {}};
  Objects out;
  try {
    out.linked = compile_split(mod, names, config, parallel, times, out.claim);
    if (out.claim) {
      shared_.wait(*out.claim);
      if (out.claim->own) shared_.provide(*out.claim, std::move(out.linked[1]), mod.getModuleIdentifier());
      out.linked.resize(1);
    }
  } catch (...) {
    if (out.claim) shared_.abandon(*out.claim);
    throw;
  }
  return out;
}

// The module's object, and its kernels `names` as a second one. Shared (config.share_kernels,
// and the kernels self-contained), the kernels' part names them by their IR, claims them and
// drops those another compile made before it compiles the rest; the module's part optimizes
// meanwhile and takes the names before its code generation, so the naming costs the first
// call nothing where the module's optimization takes longer. Shared, the kernels' part is the
// first part, which the calling thread takes (ag/detail/parallel.h): the module's part, on the
// pool thread, may wait for its names; done in turn on one thread, it never does.
std::vector<std::string> ModuleCompiler::compile_split(llvm::Module& mod, const std::vector<std::string>& names,
                                                       const JitConfig& config, bool parallel, CompileTimes& times,
                                                       std::optional<SharedKernels::Claim>& claim) {
  const int level = config.opt_level;
  const bool share = config.share_kernels && kernels_self_contained(mod, names);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bitcode = split_off(mod, names);
  times.split_ms = ms_since(t0);
  std::vector<std::string> objects(2);
  std::promise<void> named;
  std::shared_future<void> names_ready = named.get_future().share();
  std::vector<std::pair<std::string, std::string>> renames;
  int compiled_apart = static_cast<int>(names.size());
  std::thread::id compiled_on[2];
  auto kernels_part = [&] {
    bool published = false;
    try {
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> kernels = second_part(ctx, bitcode, names);
      if (share) {
        const auto t1 = std::chrono::steady_clock::now();
        KernelNaming naming = name_kernels_by_content(*kernels, names, target_id_ + "|" + config.key());
        times.naming_ms = ms_since(t1);
        claim = shared_.claim(naming.kernels);
        for (const std::string& n : claim->found) kernels->getFunction(n)->deleteBody();  // called in agc.kernels
        renames = std::move(naming.renames);
        times.kernels_shared = static_cast<int>(claim->found.size());
        compiled_apart = static_cast<int>(claim->to_compile.size());
        published = true;
        named.set_value();
        if (claim->to_compile.empty()) return;
      }
      objects[1] = compile_part(*kernels, machines_, level, times.kernels_optimize_ms, times.kernels_codegen_ms);
    } catch (...) {
      if (!published) named.set_exception(std::current_exception());
      throw;
    }
  };
  auto module_part = [&] {
    auto lease = take(machines_.take(level), "target machine");
    const auto t1 = std::chrono::steady_clock::now();
    times.short_pipeline = optimize_at(mod, *lease.tm, level);
    times.optimize_ms = ms_since(t1);
    if (share) {
      names_ready.get();
      rename_declarations(mod, renames);
    }
    const auto t2 = std::chrono::steady_clock::now();
    objects[0] = lease.object(mod);
    times.codegen_ms = ms_since(t2);
  };
  // Not shared, the module is the first part, as it was before kernels were shared
  // (AG_JIT_SHARE_KERNELS=0 compiles as then).
  const int64_t kernels_first = share ? 0 : 1;
  auto part = [&](int64_t i) {
    compiled_on[i] = std::this_thread::get_id();
    if (i == kernels_first) kernels_part();
    else module_part();
  };
  if (parallel) {
    detail::parallel_for(2, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) part(i);
    });
  } else {
    part(0);
    part(1);
  }
  if (compiled_apart == 0) objects.resize(1);  // every kernel was shared already
  times.kernels_in_parallel = compiled_apart > 0 && compiled_on[0] != compiled_on[1];
  times.kernels_apart = compiled_apart;
  if (compiled_apart > 0) split_.fetch_add(1);
  if (times.kernels_in_parallel) split_in_parallel_.fetch_add(1);
  return objects;
}

ModuleCompiler::Inspected ModuleCompiler::optimize_for_inspection(llvm::Module& m, const JitConfig& config) {
  const int level = config.opt_level;
  Inspected parts{take(machines_.take(level), "target machine"), nullptr, nullptr};
  if (std::vector<std::string> names = kernels_apart(m, config); !names.empty()) {
    // Named as compiled: shared or not, the kernels are the same code.
    if (config.share_kernels && kernels_self_contained(m, names)) {
      const KernelNaming naming = name_kernels_by_content(m, names, target_id_ + "|" + config.key());
      names.clear();
      for (const NamedKernel& k : naming.kernels) names.push_back(k.name);
    }
    const std::string bitcode = split_off(m, names);
    parts.ctx = std::make_unique<llvm::LLVMContext>();
    parts.kernels = second_part(*parts.ctx, bitcode, names);
    optimize_at(*parts.kernels, *parts.lease.tm, level);
  }
  optimize_at(m, *parts.lease.tm, level);
  return parts;
}

}  // namespace ag::jit
