// LLJIT setup and per-function JITDylibs. A compile optimizes (O2) and generates code itself, its
// kernels on a second thread when they are large enough (module_split.h), and links the objects;
// the same objects go to the disk cache.
#include "engine.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/IRCompileLayer.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectFileInterface.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "ag/detail/fork_safety.h"
#include "ag/detail/kernel_set.h"
#include "ag/detail/log.h"
#include "ag/detail/parallel.h"
#include "lower/build_module.h"
#include "lower/node_lines.h"
#include "llvm_errors.h"
#include "module_compile.h"
#include "module_split.h"
#include "object_helpers.h"
#include "optimizer.h"
#include "perf_map.h"
#include "target_machine_pool.h"
#include "plan_dump.h"
#include "rt_helper_types.h"
#include "target.h"
#include "process_symbols.h"
#include "shared_kernels.h"
#include "object_emitter.h"
#include "warm_up.h"

namespace ag::jit {
namespace {

namespace orc = llvm::orc;

void* addr(auto* f) { return reinterpret_cast<void*>(f); }

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

constexpr const char* kKernelsHeader = "\n; ---- compiled as a second module, on a second thread (docs/jit.md, \"Two threads per compile\") ----\n";

void append(Executable::MappedText& to, Executable::MappedText more) {
  const std::string header = kKernelsHeader;
  to.text += header + more.text;
  if (to.line_nodes.empty()) return;
  to.line_nodes.insert(to.line_nodes.end(), static_cast<size_t>(std::count(header.begin(), header.end(), '\n')), -1);
  to.line_nodes.insert(to.line_nodes.end(), more.line_nodes.begin(), more.line_nodes.end());
}

}  // namespace

struct Engine::Impl {
  std::unique_ptr<orc::LLJIT> jit;
  orc::JITDylib* runtime = nullptr;
  orc::JITDylib* kernels = nullptr;  // agc.kernels: kernels shared across compiles
  std::unique_ptr<SharedKernels> shared;  // after `jit`: destroyed before it
  std::unique_ptr<orc::JITTargetMachineBuilder> jtmb;
  std::shared_ptr<TargetMachinePool> machines;
  std::string target_id;
  int vector_bytes = 16;  // the target's widest vector registers: 16 (SSE), 32 (AVX2), 64 (AVX-512)
  std::atomic<uint64_t> counter{0};
  std::atomic<int64_t> live{0};  // per-function JITDylibs not removed yet
  std::unique_ptr<ModuleCompiler> compiler;

  orc::JITDylib& new_dylib(const std::string& id) {
    llvm::Expected<orc::JITDylib&> jd = jit->createJITDylib(id);
    if (!jd) throw InternalError("jit: create JITDylib: " + message_of(jd.takeError()));
    jd->addToLinkOrder(*kernels);
    jd->addToLinkOrder(*runtime);
    live.fetch_add(1);
    return *jd;
  }
  void remove(orc::JITDylib& jd) {
    llvm::consumeError(jit->getExecutionSession().removeJITDylib(jd));
    live.fetch_sub(1);
  }

  EntryFn lookup(orc::JITDylib& jd) {
    auto sym = jit->lookup(jd, kEntrySymbol);
    if (!sym) {
      const std::string why = message_of(sym.takeError());
      remove(jd);
      throw InternalError("jit: cannot link compiled code: " + why);
    }
    return sym->toPtr<EntryFn>();
  }

  std::unique_ptr<llvm::Module> build(const Program& p, llvm::LLVMContext& ctx, const std::string& name, bool node_lines = false) {
    return build_module(p, ctx, jit->getDataLayout(), jit->getTargetTriple().str(), vector_bytes, name, node_lines);
  }

  // Links the objects of one function into a JITDylib of its own and returns its entry. The
  // symbols of the objects after the first (the kernels a split compile made apart) are looked
  // up, and so made ready, before the entry: with only the entry looked up, LLVM 19's ORC
  // returned it while the kernel object it calls could still be unfinalized when another thread
  // was linking too, and the entry's first call jumped into memory that was not yet executable
  // (JitConcurrency.DifferentFunctionsCompileInParallel crashed in 1 run of 30, 1 of 4 with the
  // disk cache).
  struct Linked {
    orc::JITDylib* dylib = nullptr;
    EntryFn entry = nullptr;
    bool uses_call_state = true;  // calls_context_helpers
  };
  Linked link(const std::string& id, const std::vector<std::string_view>& objects, const char* what) {
    orc::JITDylib& jd = new_dylib(id);
    orc::SymbolLookupSet later;
    auto fail = [&](llvm::Error e) {
      remove(jd);
      throw InternalError(std::string("jit: ") + what + ": " + message_of(std::move(e)));
    };
    for (size_t i = 0; i < objects.size(); ++i) {
      auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(objects[i].data(), objects[i].size()),
                                                         id + "." + std::to_string(i));
      if (i > 0) {
        auto defined = orc::getObjectFileInterface(jit->getExecutionSession(), buffer->getMemBufferRef());
        if (!defined) fail(defined.takeError());
        for (const auto& [name, flags] : defined->SymbolFlags)
          if (flags.isExported()) later.add(name);
      }
      if (llvm::Error e = jit->addObjectFile(jd, std::move(buffer))) fail(std::move(e));
    }
    if (!later.empty()) {
      auto ready = jit->getExecutionSession().lookup(orc::makeJITDylibSearchOrder(&jd), std::move(later));
      if (!ready) fail(ready.takeError());
    }
    return {&jd, lookup(jd), calls_context_helpers(objects)};
  }
};

std::string Engine::target_id_for_environment() { return current_target_id(); }

std::shared_ptr<Engine> Engine::get() {
  static std::mutex mu;
  static auto* current = new std::weak_ptr<Engine>;  // never destroyed: the background compiler may run at exit
  std::lock_guard lock(mu);
  if (auto e = current->lock()) return e;
  std::shared_ptr<Engine> e(new Engine());
  *current = e;
  return e;
}

namespace {

// Sets one of the process's libLLVM options. LLVM has no per-module switch for the three below,
// only these options: agc is their one user in the programs it runs in, and a program that
// drives LLVM itself keeps its own setting if it set one (an option given on its command line
// is not overridden). As if given first on a command line, at position 1: some passes take an
// option as set only at a position above 0 (the post-RA scheduler's `getPosition() > 0`), and
// at 0 that one ran on as if never turned off.
void set_llvm_option(const char* name, const char* value) {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end() || it->second->getNumOccurrences() > 0) return;
  it->second->addOccurrence(1, name, value);
}

// - With 16-float vectors (AVX-512) the loop vectorizer also vectorizes each loop's remainder
//   with 8-float vectors: a third copy of every fused kernel for at most 15 elements. Compiling
//   it cost a sizable share of the code generator's time; the scalar remainder it replaces runs
//   those 15 elements quickly. Loops of 32 or more elements per vector (bytes: a uint8 board)
//   keep it: their scalar remainder of up to 31 elements took as long as a 1022-byte row's
//   vector part (docs/performance.md, "Measured decisions": epilogue vectorization).
// - The list scheduler after register allocation, which LLVM runs for Zen CPUs: a sizable share
//   of code generation, for the same code size and no measurable change in W1-W8's run times on
//   an out-of-order core (docs/performance.md, "Measured decisions": post-RA scheduler).
// - Loop strength reduction, the code generator's rewrite of loop addresses: a sixth of its time
//   (the transformer block's 17 -> 12 ms, n-body's 27 -> 22), and no run time of bench/apps or
//   W1-W8 moved; agc's loops already address by one index (docs/jit.md, "Compile times").
void set_llvm_options() {
  set_llvm_option("epilogue-vectorization-minimum-VF", "32");
  set_llvm_option("post-RA-scheduler", "false");
  set_llvm_option("disable-lsr", "true");
}

// The IR compile layer's compiler: agc adds objects, never IR modules.
struct NoIRCompiler final : orc::IRCompileLayer::IRCompiler {
  NoIRCompiler() : IRCompiler(orc::IRSymbolMapper::ManglingOptions{}) {}
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module&) override {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "agc compiles its modules itself (Engine::compile)");
  }
};

}  // namespace

Engine::Engine() : impl_(std::make_unique<Impl>()) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    set_llvm_options();
  });
  Impl& m = *impl_;
  m.jtmb = std::make_unique<orc::JITTargetMachineBuilder>(jit_target_machine());
  m.jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  m.machines = std::make_shared<TargetMachinePool>(*m.jtmb);
  m.vector_bytes = vector_bytes(*m.jtmb);
  m.target_id = target_id_of(*m.jtmb);

  orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(*m.jtmb);
  // LLJIT would create two TargetMachines of its own, one for the data layout and one for an IR
  // compile layer that agc never uses (it compiles modules itself and adds objects): a third of
  // the engine's creation, which a process's first compile waits for. The data layout comes from
  // the pool's first machine, which the first compile then takes.
  {
    auto first = take(m.machines->take(JitConfig::from_environment().opt_level), "target machine");
    builder.setDataLayout(first.tm->createDataLayout());
  }
  builder.setCompileFunctionCreator([](orc::JITTargetMachineBuilder) -> llvm::Expected<std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
    return std::make_unique<NoIRCompiler>();
  });
  // No static initializers, no platform runtime: the generic IR platform only costs setup time.
  // Process symbols are reached through agc.runtime's generator, nothing else.
  builder.setPlatformSetUp(orc::setUpInactivePlatform);
  builder.setLinkProcessSymbolsByDefault(false);
  m.jit = take(builder.create(), "create LLJIT");
  add_perf_map_if_asked(*m.jit);
  m.jit->getExecutionSession().setErrorReporter([](llvm::Error e) {
    const std::string msg = message_of(std::move(e));
    try {
      detail::log_line("agc: jit error: " + msg);
    } catch (...) {
    }
  });
  m.runtime = &m.jit->getExecutionSession().createBareJITDylib("agc.runtime");
  orc::SymbolMap symbols;
  auto bind = [&](const char* name, void* p) {
    symbols[m.jit->mangleAndIntern(name)] = {orc::ExecutorAddr::fromPtr(p), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  };
  const detail::KernelSet& kernels = detail::kernels();
  {
    using enum RtType;
#define AG_RT_HELPER(Name, Result, Params, Pure, Address)                                     \
  static_assert(rt_signature_fits<Result, AG_RT_UNPAREN Params>(static_cast<decltype(Address)>(nullptr)), \
                #Name ": its C signature differs from its row in rt_helpers.def");           \
  bind(#Name, addr(Address));
#include "rt_helpers.def"
  }
  check(m.runtime->define(orc::absoluteSymbols(std::move(symbols))), "bind runtime symbols");
  check(add_process_symbols(*m.runtime, m.jit->getDataLayout().getGlobalPrefix()), "process symbols");
  m.kernels = &m.jit->getExecutionSession().createBareJITDylib("agc.kernels");
  m.kernels->addToLinkOrder(*m.runtime);
  m.shared = std::make_unique<SharedKernels>(*m.jit, *m.kernels);
  m.compiler = std::make_unique<ModuleCompiler>(*m.machines, *m.shared, m.target_id);
}

Engine::~Engine() {
  impl_->shared.reset();  // its objects leave while the session runs
  if (impl_->jit) llvm::consumeError(impl_->jit->getExecutionSession().endSession());
}

const std::string& Engine::target_id() const { return impl_->target_id; }
const std::string& Engine::cpu() const { return impl_->jtmb->getCPU(); }

std::unique_ptr<CodeHandle> Engine::compile(const Program& program, const std::string& name, bool parallel,
                                            std::string* object, CompileTimes* times) {
  Impl& m = *impl_;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const std::string id = "agc." + std::to_string(m.counter.fetch_add(1)) + "." + name;
  CompileTimes t;
  llvm::LLVMContext ctx;
  // Named by the function, not `id`: the object is then the same bytes in any process, whatever
  // was compiled before it (the disk cache's entries, codegen_reuse_test).
  std::unique_ptr<llvm::Module> mod = m.build(program, ctx, name);
  t.lower_ms = ms_since(t0);
  ModuleCompiler::Objects objects = m.compiler->compile(*mod, program.config, parallel, t);
  // The shared kernels the code calls: in its disk-cache entry (which links alone, each kernel
  // then the function's own), and in what says whether it reads its CallState.
  std::vector<std::string> all = objects.linked;
  SharedObjects kernels;
  if (objects.claim) {
    for (std::string& o : m.shared->objects_of(*objects.claim)) all.push_back(std::move(o));
    kernels = SharedKernels::held_by(*objects.claim);
  }
  const auto t_link = Clock::now();
  Impl::Linked linked;
  try {
    linked = m.link(id, std::vector<std::string_view>(objects.linked.begin(), objects.linked.end()), "cannot link compiled code");
  } catch (...) {
    m.shared->release(kernels);
    throw;
  }
  t.link_ms = ms_since(t_link);
  if (!kernels.empty()) linked.uses_call_state = calls_context_helpers(std::vector<std::string_view>(all.begin(), all.end()));
  if (object) *object = bundle_objects(all);
  if (times) *times = t;
  return std::make_unique<CodeHandle>(shared_from_this(), linked.dylib, linked.entry, linked.uses_call_state, std::move(kernels));
}

std::unique_ptr<CodeHandle> Engine::load_object(std::string_view object, const std::string& name) {
  Impl& m = *impl_;
  const std::string id = "agc." + std::to_string(m.counter.fetch_add(1)) + "." + name + ".cached";
  const std::vector<std::string_view> objects = unbundle_objects(object);
  if (objects.empty()) throw InternalError("jit: cannot load cached object: a malformed bundle of objects");
  const Impl::Linked linked = m.link(id, objects, "cannot load cached object");
  return std::make_unique<CodeHandle>(shared_from_this(), linked.dylib, linked.entry, linked.uses_call_state);
}

double Engine::warm_up() {
  // A first call that comes at once then has the cores to itself: compiling more while it
  // compiles only competes with it (docs/performance.md, "Measured decisions": warm-up delay).
  std::this_thread::sleep_for(kWarmUpDelay);
  auto begun = [&] { return impl_->counter.load() > 0; };
  if (begun()) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int level = JitConfig::from_environment().opt_level;
  // On this thread and on a pool thread, the one that compiles the kernels of a split module:
  // each has LLVM's allocations of its own to warm.
  detail::parallel_for(2, 1, [&](int64_t, int64_t) {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> mod = warm_up_module(ctx, impl_->jit->getDataLayout(), impl_->jit->getTargetTriple().str());
    auto lease = take(impl_->machines->take(level), "target machine");
    optimize_at(*mod, *lease.tm, level);
    if (!begun()) lease.object(*mod);
  });
  return ms_since(t0);
}

std::string Engine::ir(const Program& program, const std::string& name, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name);
  std::optional<ModuleCompiler::Inspected> parts;
  if (optimized) parts.emplace(impl_->compiler->optimize_for_inspection(*mod, program.config));
  std::string text;
  llvm::raw_string_ostream os(text);
  mod->print(os, nullptr);
  if (parts && parts->kernels) {
    os << kKernelsHeader;
    parts->kernels->print(os, nullptr);
  }
  return text;
}

std::string Engine::assembly(const Program& program, const std::string& name) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name);
  const ModuleCompiler::Inspected parts = impl_->compiler->optimize_for_inspection(*mod, program.config);
  std::string text = emit_assembly(*mod, *parts.lease.tm);
  if (parts.kernels) text += kKernelsHeader + emit_assembly(*parts.kernels, *parts.lease.tm);
  return text;
}

Executable::MappedText Engine::ir_by_node(const Program& program, const std::string& name, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name, /*node_lines=*/true);
  std::optional<ModuleCompiler::Inspected> parts;
  if (optimized) parts.emplace(impl_->compiler->optimize_for_inspection(*mod, program.config));
  Executable::MappedText out = print_ir_by_node(*mod);
  if (parts && parts->kernels) append(out, print_ir_by_node(*parts->kernels));
  out.node_keys = plan_node_keys(program);
  return out;
}

Executable::MappedText Engine::assembly_by_node(const Program& program, const std::string& name) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name, /*node_lines=*/true);
  const ModuleCompiler::Inspected parts = impl_->compiler->optimize_for_inspection(*mod, program.config);
  Executable::MappedText out = map_assembly_by_node(emit_assembly(*mod, *parts.lease.tm));
  if (parts.kernels) append(out, map_assembly_by_node(emit_assembly(*parts.kernels, *parts.lease.tm)));
  out.node_keys = plan_node_keys(program);
  return out;
}

void Engine::remove(void* dylib, const SharedObjects& kernels) {
  impl_->remove(*static_cast<orc::JITDylib*>(dylib));
  impl_->shared->release(kernels);
}

int64_t Engine::live_functions() const { return impl_->live.load(); }
int64_t Engine::split_compiles() const { return impl_->compiler->split_compiles(); }
int64_t Engine::split_compiles_in_parallel() const { return impl_->compiler->split_compiles_in_parallel(); }
int64_t Engine::reused_codegen_runs() { return ObjectEmitter::reused_runs(); }
int64_t Engine::shared_kernel_hits() const { return impl_->shared->hits(); }
int64_t Engine::shared_kernel_objects() const { return impl_->shared->live_objects(); }

CodeHandle::CodeHandle(std::shared_ptr<Engine> engine, void* dylib, EntryFn entry, bool uses_call_state, SharedObjects kernels)
    : engine_(std::move(engine)), dylib_(dylib), entry_(entry), uses_call_state_(uses_call_state), kernels_(std::move(kernels)) {}

// Dropping code takes ORC's locks, and may happen under a caller's locks (a cache evicting an
// entry): it does not wait at the fork gate. While a fork is being prepared the code stays
// mapped instead (a leak of one function's code, only in that window).
CodeHandle::~CodeHandle() {
  if (!detail::try_enter_fork_gate()) return;
  engine_->remove(dylib_, kernels_);
  detail::leave_fork_gate();
}

}  // namespace ag::jit
