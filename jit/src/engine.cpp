// LLJIT setup and per-function JITDylibs. The IR transform layer runs the O3 pipeline; an
// ObjectCache hook hands back each compiled object so it can be stored in the disk cache.
#include "engine.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <map>
#include <mutex>

#include "ag/detail/log.h"
#include "lower/build_module.h"
#include "optimizer.h"

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

}  // namespace

struct Engine::Impl {
  std::unique_ptr<orc::LLJIT> jit;
  orc::JITDylib* runtime = nullptr;
  std::unique_ptr<orc::JITTargetMachineBuilder> jtmb;
  std::shared_ptr<ObjectCapture> capture = std::make_shared<ObjectCapture>();
  std::string target_id;
  std::atomic<uint64_t> counter{0};

  std::unique_ptr<llvm::TargetMachine> target_machine() { return take(jtmb->createTargetMachine(), "target machine"); }

  orc::JITDylib& new_dylib(const std::string& id) {
    llvm::Expected<orc::JITDylib&> jd = jit->createJITDylib(id);
    if (!jd) throw InternalError("jit: create JITDylib: " + message_of(jd.takeError()));
    jd->addToLinkOrder(*runtime);
    return *jd;
  }

  EntryFn lookup(orc::JITDylib& jd) {
    auto sym = jit->lookup(jd, kEntrySymbol);
    if (!sym) {
      const std::string why = message_of(sym.takeError());
      llvm::consumeError(jit->getExecutionSession().removeJITDylib(jd));
      throw InternalError("jit: cannot link compiled code: " + why);
    }
    return sym->toPtr<EntryFn>();
  }

  std::unique_ptr<llvm::Module> build(const Program& p, llvm::LLVMContext& ctx, const std::string& name) {
    return build_module(p, ctx, jit->getDataLayout(), jit->getTargetTriple().str(), name);
  }
};

std::shared_ptr<Engine> Engine::get() {
  static std::mutex mu;
  static std::weak_ptr<Engine> current;
  std::lock_guard lock(mu);
  if (auto e = current.lock()) return e;
  std::shared_ptr<Engine> e(new Engine());
  current = e;
  return e;
}

Engine::Engine() : impl_(std::make_unique<Impl>()) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Vectorized libm (glibc's libmvec): the loop vectorizer calls its _ZGV* variants.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  });
  Impl& m = *impl_;
  m.jtmb = std::make_unique<orc::JITTargetMachineBuilder>(take(orc::JITTargetMachineBuilder::detectHost(), "detect host"));
  m.jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  std::string features;
  for (const std::string& f : m.jtmb->getFeatures().getFeatures()) features += f + ",";
  m.target_id = m.jtmb->getTargetTriple().str() + "|" + m.jtmb->getCPU() + "|" + features + "|llvm-" LLVM_VERSION_STRING;

  std::shared_ptr<ObjectCapture> capture = m.capture;
  orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(*m.jtmb);
  builder.setCompileFunctionCreator([capture](orc::JITTargetMachineBuilder jtmb)
                                        -> llvm::Expected<std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
    return std::make_unique<orc::ConcurrentIRCompiler>(std::move(jtmb), capture.get());
  });
  m.jit = take(builder.create(), "create LLJIT");
  m.jit->getExecutionSession().setErrorReporter([](llvm::Error e) {
    const std::string msg = message_of(std::move(e));
    try {
      detail::log_line("agc: jit error: " + msg);
    } catch (...) {
    }
  });
  orc::JITTargetMachineBuilder opt_jtmb = *m.jtmb;
  m.jit->getIRTransformLayer().setTransform(
      [opt_jtmb](orc::ThreadSafeModule tsm, const orc::MaterializationResponsibility&) -> llvm::Expected<orc::ThreadSafeModule> {
        orc::JITTargetMachineBuilder builder = opt_jtmb;
        auto tm = builder.createTargetMachine();
        if (!tm) return tm.takeError();
        tsm.withModuleDo([&](llvm::Module& mod) { optimize_module(mod, **tm); });
        return std::move(tsm);
      });

  m.runtime = &m.jit->getExecutionSession().createBareJITDylib("agc.runtime");
  orc::SymbolMap symbols;
  auto bind = [&](const char* name, void* p) {
    symbols[m.jit->mangleAndIntern(name)] = {orc::ExecutorAddr::fromPtr(p), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  };
  bind("agc_rt_alloc", addr(&agc_rt_alloc));
  bind("agc_rt_free", addr(&agc_rt_free));
  bind("agc_rt_output", addr(&agc_rt_output));
  bind("agc_rt_fail", addr(&agc_rt_fail));
  bind("agc_rt_eval", addr(&agc_rt_eval));
  bind("agc_rt_slot_copy", addr(&agc_rt_slot_copy));
  bind("agc_rt_ipow_i32", addr(&agc_rt_ipow_i32));
  bind("agc_rt_ipow_i64", addr(&agc_rt_ipow_i64));
  bind("agc_rt_gemm_f32", addr(&agc_rt_gemm_f32));
  bind("agc_rt_gemm_f64", addr(&agc_rt_gemm_f64));
  bind("agc_rt_gemm_i32", addr(&agc_rt_gemm_i32));
  bind("agc_rt_gemm_i64", addr(&agc_rt_gemm_i64));
  check(m.runtime->define(orc::absoluteSymbols(std::move(symbols))), "bind runtime symbols");
  // libm, libmvec and memcpy/memset resolve through the process.
  m.runtime->addGenerator(take(orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(m.jit->getDataLayout().getGlobalPrefix()),
                               "process symbols"));
}

Engine::~Engine() {
  if (impl_->jit) llvm::consumeError(impl_->jit->getExecutionSession().endSession());
}

const std::string& Engine::target_id() const { return impl_->target_id; }

std::unique_ptr<CodeHandle> Engine::compile(const Program& program, const std::string& name, std::string* object) {
  Impl& m = *impl_;
  const std::string id = "agc." + std::to_string(m.counter.fetch_add(1)) + "." + name;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> mod = m.build(program, *ctx, id);
  if (object) m.capture->want(id);
  orc::JITDylib& jd = m.new_dylib(id);
  check(m.jit->addIRModule(jd, orc::ThreadSafeModule(std::move(mod), std::move(ctx))), "add module");
  const EntryFn entry = m.lookup(jd);
  if (object) *object = m.capture->take(id);
  return std::make_unique<CodeHandle>(shared_from_this(), &jd, entry);
}

std::unique_ptr<CodeHandle> Engine::load_object(std::string_view object, const std::string& name) {
  Impl& m = *impl_;
  const std::string id = "agc." + std::to_string(m.counter.fetch_add(1)) + "." + name + ".cached";
  orc::JITDylib& jd = m.new_dylib(id);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), id);
  if (llvm::Error e = m.jit->addObjectFile(jd, std::move(buffer))) {
    llvm::consumeError(m.jit->getExecutionSession().removeJITDylib(jd));
    throw InternalError("jit: cannot load cached object: " + message_of(std::move(e)));
  }
  const EntryFn entry = m.lookup(jd);
  return std::make_unique<CodeHandle>(shared_from_this(), &jd, entry);
}

std::string Engine::ir(const Program& program, const std::string& name, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name);
  if (optimized) optimize_module(*mod, *impl_->target_machine());
  std::string text;
  llvm::raw_string_ostream os(text);
  mod->print(os, nullptr);
  return text;
}

std::string Engine::assembly(const Program& program, const std::string& name) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(program, ctx, name);
  auto tm = impl_->target_machine();
  optimize_module(*mod, *tm);
  return emit_assembly(*mod, *tm);
}

void Engine::remove(void* dylib) {
  llvm::consumeError(impl_->jit->getExecutionSession().removeJITDylib(*static_cast<orc::JITDylib*>(dylib)));
}

CodeHandle::CodeHandle(std::shared_ptr<Engine> engine, void* dylib, EntryFn entry)
    : engine_(std::move(engine)), dylib_(dylib), entry_(entry) {}

CodeHandle::~CodeHandle() { engine_->remove(dylib_); }

}  // namespace ag::jit
