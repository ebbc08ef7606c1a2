// LLJIT setup and per-function JITDylibs. The IR transform layer runs the O3 pipeline; an
// ObjectCache hook hands back each compiled object so it can be stored in the disk cache.
#include "engine.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include "ag/detail/kernel_set.h"
#include "ag/detail/log.h"
#include "lower/build_module.h"
#include "lower/node_lines.h"
#include "optimizer.h"
#include "plan_dump.h"
#include "rt_helper_types.h"
#include "target.h"
#include "warm_up.h"

namespace ag::jit {
namespace {

namespace orc = llvm::orc;

std::string message_of(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

template <class T>
T take(llvm::Expected<T> v, const char* what) {
  if (!v) throw InternalError(std::string("jit: ") + what + ": " + message_of(v.takeError()));
  return std::move(*v);
}

void check(llvm::Error e, const char* what) {
  if (e) throw InternalError(std::string("jit: ") + what + ": " + message_of(std::move(e)));
}

// Receives each object the JIT compiles (keyed by module identifier) without ever serving one:
// our own disk cache is consulted before any IR is built.
class ObjectCapture final : public llvm::ObjectCache {
 public:
  void notifyObjectCompiled(const llvm::Module* m, llvm::MemoryBufferRef obj) override {
    std::lock_guard lock(mu_);
    if (wanted_.count(m->getModuleIdentifier())) objects_[m->getModuleIdentifier()] = obj.getBuffer().str();
  }
  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module*) override { return nullptr; }
  void want(const std::string& id) {
    std::lock_guard lock(mu_);
    wanted_[id] = true;
  }
  std::string take(const std::string& id) {
    std::lock_guard lock(mu_);
    wanted_.erase(id);
    auto it = objects_.find(id);
    if (it == objects_.end()) return {};
    std::string out = std::move(it->second);
    objects_.erase(it);
    return out;
  }

 private:
  std::mutex mu_;
  std::map<std::string, bool> wanted_;
  std::map<std::string, std::string> objects_;
};

void* addr(auto* f) { return reinterpret_cast<void*>(f); }

// Creating a TargetMachine costs as much as compiling a small function: keep a few per
// optimization level and hand them to one compile at a time.
class TargetMachinePool {
 public:
  explicit TargetMachinePool(orc::JITTargetMachineBuilder jtmb) : jtmb_(std::move(jtmb)) {}

  struct Lease {
    Lease(TargetMachinePool* p, int l, std::unique_ptr<llvm::TargetMachine> t) : pool(p), level(l), tm(std::move(t)) {}
    Lease(Lease&& o) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (tm) pool->give_back(level, std::move(tm));
    }
    TargetMachinePool* pool;
    int level;
    std::unique_ptr<llvm::TargetMachine> tm;
  };
  llvm::Expected<Lease> take(int level) {
    {
      std::lock_guard lock(mu_);
      auto& free = free_[level];
      if (!free.empty()) {
        Lease l(this, level, std::move(free.back()));
        free.pop_back();
        return llvm::Expected<Lease>(std::move(l));
      }
    }
    orc::JITTargetMachineBuilder b = jtmb_;
    b.setCodeGenOptLevel(level == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Default);
    auto tm = b.createTargetMachine();
    if (!tm) return tm.takeError();
    if (level == 0) (*tm)->setO0WantsFastISel(true);  // the fast path: FastISel, no IR passes
    return Lease(this, level, std::move(*tm));
  }

 private:
  void give_back(int level, std::unique_ptr<llvm::TargetMachine> tm) {
    if (!tm) return;
    std::lock_guard lock(mu_);
    free_[level].push_back(std::move(tm));
  }
  orc::JITTargetMachineBuilder jtmb_;
  std::mutex mu_;
  std::map<int, std::vector<std::unique_ptr<llvm::TargetMachine>>> free_;
};

// The optimization level a module was built for (a module flag set by Engine::compile).
int opt_level_of(const llvm::Module& m) {
  if (auto* md = llvm::mdconst::extract_or_null<llvm::ConstantInt>(m.getModuleFlag("agc.opt")))
    return static_cast<int>(md->getZExtValue());
  return 3;
}

// The IR pipeline's and code generator's times for the last module compiled on this thread
// (ORC materializes a module on the thread that looks it up, so Engine::compile reads its own).
thread_local double t_optimize_ms = 0, t_codegen_ms = 0;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Compiles with a pooled TargetMachine of the module's level; reports objects to `capture`.
class PooledCompiler final : public orc::IRCompileLayer::IRCompiler {
 public:
  PooledCompiler(std::shared_ptr<TargetMachinePool> pool, const llvm::TargetOptions& options, llvm::ObjectCache* capture)
      : IRCompiler(orc::irManglingOptionsFromTargetOptions(options)), pool_(std::move(pool)), capture_(capture) {}
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& m) override {
    const auto t0 = std::chrono::steady_clock::now();
    auto lease = pool_->take(opt_level_of(m));
    if (!lease) return lease.takeError();
    auto object = orc::SimpleCompiler(*lease->tm, capture_)(m);
    t_codegen_ms = ms_since(t0);
    return object;
  }

 private:
  std::shared_ptr<TargetMachinePool> pool_;
  llvm::ObjectCache* capture_;
};

}  // namespace

// The default is LLVM's O2, not O3: no workload ran faster at O3 (W1-W8 within the noise), and
// O3 compiled larger graphs slower and sometimes into slower code (a 40-layer small-MLP graph:
// 4.9 s and 44 us per call at O3, 3.8 s and 21.5 us at O2; W8's train step 200 -> 154 ms; see
// docs/jit.md, "Compile times").
int jit_opt_level() {
  const char* e = std::getenv("AG_JIT_OPT");
  if (!e || !*e) return 2;
  const int level = std::atoi(e);
  return level < 0 ? 0 : level > 3 ? 3 : level;
}

bool jit_rolled_loops(int64_t loop_nests) {
  const char* e = std::getenv("AG_JIT_ROLL");
  const std::string_view v = e ? e : "";
  if (v.empty() || v == "auto") return loop_nests > kRolledLoopNests;
  if (v == "1") return true;
  if (v == "0") return false;
  throw ValueError("AG_JIT_ROLL='" + std::string(v) + "': expected auto, 1 or 0");
}

void optimize_at(llvm::Module& m, llvm::TargetMachine& tm, int level) {
  const auto t0 = std::chrono::steady_clock::now();
  if (level > 0) optimize_module(m, tm, level);
  t_optimize_ms = ms_since(t0);
}

struct Engine::Impl {
  std::unique_ptr<orc::LLJIT> jit;
  orc::JITDylib* runtime = nullptr;
  std::unique_ptr<orc::JITTargetMachineBuilder> jtmb;
  std::shared_ptr<TargetMachinePool> machines;
  std::shared_ptr<ObjectCapture> capture = std::make_shared<ObjectCapture>();
  std::string target_id;
  int vector_bytes = 16;  // the target's widest vector registers: 16 (SSE), 32 (AVX2), 64 (AVX-512)
  std::atomic<uint64_t> counter{0};
  std::atomic<int64_t> live{0};  // per-function JITDylibs not removed yet

  orc::JITDylib& new_dylib(const std::string& id) {
    llvm::Expected<orc::JITDylib&> jd = jit->createJITDylib(id);
    if (!jd) throw InternalError("jit: create JITDylib: " + message_of(jd.takeError()));
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

  std::unique_ptr<llvm::Module> build(const Program& p, llvm::LLVMContext& ctx, const std::string& name, int level,
                                      bool node_lines = false) {
    auto m = build_module(p, ctx, jit->getDataLayout(), jit->getTargetTriple().str(), vector_bytes, name, node_lines);
    m->addModuleFlag(llvm::Module::Warning, "agc.opt", static_cast<uint32_t>(level));
    return m;
  }
};

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

// With 16-float vectors (AVX-512) the loop vectorizer also vectorizes each loop's remainder with
// 8-float vectors: a third copy of every fused kernel for at most 15 elements. Compiling it cost
// a quarter of the code generator's time (the tanh chain: codegen 7.6 -> 5.6 ms; docs/jit.md,
// "Compile times"); the scalar remainder it replaces runs those 15 elements in ~10 ns. LLVM has
// no per-loop switch for it, only this option of the process's libLLVM: agc is its one user in
// the programs it runs in, and a program that drives LLVM itself keeps its own setting if it
// set one (an option given on the command line is not overridden).
void disable_epilogue_vectorization() {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("enable-epilogue-vectorization");
  if (it == options.end() || it->second->getNumOccurrences() > 0) return;
  it->second->addOccurrence(0, "enable-epilogue-vectorization", "false");
}

}  // namespace

Engine::Engine() : impl_(std::make_unique<Impl>()) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Vectorized libm (glibc's libmvec): the loop vectorizer calls its _ZGV* variants.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
    disable_epilogue_vectorization();
  });
  Impl& m = *impl_;
  m.jtmb = std::make_unique<orc::JITTargetMachineBuilder>(jit_target_machine());
  m.jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  m.machines = std::make_shared<TargetMachinePool>(*m.jtmb);
  std::string features;
  for (const std::string& f : m.jtmb->getFeatures().getFeatures()) features += f + ",";
  m.vector_bytes = vector_bytes(*m.jtmb);
  m.target_id = m.jtmb->getTargetTriple().str() + "|" + m.jtmb->getCPU() + "|" + features + "|llvm-" LLVM_VERSION_STRING;

  std::shared_ptr<ObjectCapture> capture = m.capture;
  std::shared_ptr<TargetMachinePool> machines = m.machines;
  orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(*m.jtmb);
  // No static initializers, no platform runtime: the generic IR platform only costs setup time.
  // Process symbols are reached through agc.runtime's generator, nothing else.
  builder.setPlatformSetUp(orc::setUpInactivePlatform);
  builder.setLinkProcessSymbolsByDefault(false);
  builder.setCompileFunctionCreator([capture, machines](orc::JITTargetMachineBuilder jtmb)
                                        -> llvm::Expected<std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
    return std::make_unique<PooledCompiler>(machines, jtmb.getOptions(), capture.get());
  });
  m.jit = take(builder.create(), "create LLJIT");
  m.jit->getExecutionSession().setErrorReporter([](llvm::Error e) {
    const std::string msg = message_of(std::move(e));
    try {
      detail::log_line("agc: jit error: " + msg);
    } catch (...) {
    }
  });
  m.jit->getIRTransformLayer().setTransform(
      [machines](orc::ThreadSafeModule tsm, const orc::MaterializationResponsibility&) -> llvm::Expected<orc::ThreadSafeModule> {
        llvm::Error err = llvm::Error::success();
        tsm.withModuleDo([&](llvm::Module& mod) {
          const int level = opt_level_of(mod);
          auto lease = machines->take(level);
          if (!lease) err = lease.takeError();
          else optimize_at(mod, *lease->tm, level);
        });
        if (err) return llvm::Expected<orc::ThreadSafeModule>(std::move(err));
        return llvm::Expected<orc::ThreadSafeModule>(std::move(tsm));
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
  // libm, libmvec and memcpy/memset resolve through the process.
  m.runtime->addGenerator(take(orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(m.jit->getDataLayout().getGlobalPrefix()),
                               "process symbols"));
}

Engine::~Engine() {
  if (impl_->jit) llvm::consumeError(impl_->jit->getExecutionSession().endSession());
}

const std::string& Engine::target_id() const { return impl_->target_id; }
const std::string& Engine::cpu() const { return impl_->jtmb->getCPU(); }

std::unique_ptr<CodeHandle> Engine::compile(const Program& program, const std::string& name, int level, std::string* object,
                                            CompileTimes* times) {
  Impl& m = *impl_;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const std::string id = "agc." + std::to_string(m.counter.fetch_add(1)) + "." + name;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> mod = m.build(program, *ctx, id, level);
  const auto t1 = Clock::now();
  if (object) m.capture->want(id);
  orc::JITDylib& jd = m.new_dylib(id);
  if (llvm::Error e = m.jit->addIRModule(jd, orc::ThreadSafeModule(std::move(mod), std::move(ctx)))) {
    m.remove(jd);
    throw InternalError("jit: add module: " + message_of(std::move(e)));
  }
  const EntryFn entry = m.lookup(jd);
  if (object) *object = m.capture->take(id);
  if (times) {
    times->lower_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    times->jit_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    times->optimize_ms = t_optimize_ms;
    times->codegen_ms = t_codegen_ms;
  }
  return std::make_unique<CodeHandle>(shared_from_this(), &jd, entry);
}

std::unique_ptr<CodeHandle> Engine::load_object(std::string_view object, const std::string& name) {
  Impl& m = *impl_;
  const std::string id = "agc." + std::to_string(m.counter.fetch_add(1)) + "." + name + ".cached";
  orc::JITDylib& jd = m.new_dylib(id);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), id);
  if (llvm::Error e = m.jit->addObjectFile(jd, std::move(buffer))) {
    m.remove(jd);
    throw InternalError("jit: cannot load cached object: " + message_of(std::move(e)));
  }
  const EntryFn entry = m.lookup(jd);
  return std::make_unique<CodeHandle>(shared_from_this(), &jd, entry);
}

double Engine::warm_up() {
  // Once a compile has begun, compiling more only competes with it for the CPU.
  if (impl_->counter.load() > 0) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int level = jit_opt_level();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = warm_up_module(ctx, impl_->jit->getDataLayout(), impl_->jit->getTargetTriple().str());
  auto lease = take(impl_->machines->take(level), "target machine");
  optimize_at(*mod, *lease.tm, level);
  take(orc::SimpleCompiler(*lease.tm)(*mod), "compile the warm-up module");
  return ms_since(t0);
}

std::string Engine::ir(const Program& program, const std::string& name, int level, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name, level);
  if (optimized) optimize_at(*mod, *take(impl_->machines->take(level), "target machine").tm, level);
  std::string text;
  llvm::raw_string_ostream os(text);
  mod->print(os, nullptr);
  return text;
}

std::string Engine::assembly(const Program& program, const std::string& name, int level) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name, level);
  auto lease = take(impl_->machines->take(level), "target machine");
  optimize_at(*mod, *lease.tm, level);
  return emit_assembly(*mod, *lease.tm);
}

Executable::MappedText Engine::ir_by_node(const Program& program, const std::string& name, int level, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name, level, /*node_lines=*/true);
  if (optimized) optimize_at(*mod, *take(impl_->machines->take(level), "target machine").tm, level);
  Executable::MappedText out = print_ir_by_node(*mod);
  out.node_keys = plan_node_keys(program);
  return out;
}

Executable::MappedText Engine::assembly_by_node(const Program& program, const std::string& name, int level) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name, level, /*node_lines=*/true);
  auto lease = take(impl_->machines->take(level), "target machine");
  optimize_at(*mod, *lease.tm, level);
  Executable::MappedText out = map_assembly_by_node(emit_assembly(*mod, *lease.tm));
  out.node_keys = plan_node_keys(program);
  return out;
}

void Engine::remove(void* dylib) { impl_->remove(*static_cast<orc::JITDylib*>(dylib)); }

int64_t Engine::live_functions() const { return impl_->live.load(); }

CodeHandle::CodeHandle(std::shared_ptr<Engine> engine, void* dylib, EntryFn entry)
    : engine_(std::move(engine)), dylib_(dylib), entry_(entry) {}

CodeHandle::~CodeHandle() { engine_->remove(dylib_); }

}  // namespace ag::jit
