// The runtime's CompilerBackend: plans a graph, finds its code in the disk cache or compiles it,
// and runs it. Registers itself when this object file is linked (agc::jit forces that with
// -Wl,--undefined=agc_jit_anchor). No LLVM here.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <mutex>

#include "ag/backend.h"
#include "ag/detail/fork_safety.h"
#include "ag/detail/log.h"
#include "ag/detail/object_code.h"
#include "ag/detail/parallel.h"
#include "ag/detail/profiler.h"
#include "aot_compile.h"
#include "compiled_executable.h"
#include "cpu_levels.h"
#include "disk_cache.h"
#include "engine.h"
#include "graph_key.h"
#include "plan_dump.h"

namespace ag::jit {
namespace {

// The JIT's executable: compiled code with its engine, which inspection runs again.
class JitExecutable final : public CompiledExecutable {
 public:
  JitExecutable(std::shared_ptr<const Graph> graph, std::shared_ptr<Engine> engine, std::string name, const JitConfig& config)
      : CompiledExecutable(std::move(graph), config), engine_(std::move(engine)), name_(std::move(name)) {}

  // A compile plans before it has the engine (JitBackend::compile); set before the code.
  void set_engine(std::shared_ptr<Engine> engine) { engine_ = std::move(engine); }

  void set_handle(std::shared_ptr<CodeHandle> code, bool from_disk) {
    const EntryFn entry = code->entry();
    const bool uses_call_state = code->uses_call_state();
    set_code(std::move(code), entry, from_disk, uses_call_state);
  }
  // The same machine code: the graph differs only in its Variables, which the code finds in the
  // consts table at run time (graph_key.cpp keys a variable by its type alone).
  std::unique_ptr<Executable> rebound(std::shared_ptr<const Graph> graph) const override {
    auto exe = std::make_unique<JitExecutable>(std::move(graph), engine_, name_, program().config);
    exe->set_code(code_, entry_, from_disk_, uses_call_state_);
    return exe;
  }

  // Inspection runs LLVM: under a fork-gate pass, as compiles (fork_safety.h).
  std::string llvm_ir(bool optimized) const override {
    const detail::ForkGatePass pass;
    return engine_->ir(program(), name_, optimized);
  }
  std::string assembly() const override {
    const detail::ForkGatePass pass;
    return engine_->assembly(program(), name_);
  }
  MappedText llvm_ir_mapped(bool optimized) const override {
    const detail::ForkGatePass pass;
    return engine_->ir_by_node(program(), name_, optimized);
  }
  MappedText assembly_mapped() const override {
    const detail::ForkGatePass pass;
    return engine_->assembly_by_node(program(), name_);
  }
  std::string_view backend_name() const override { return "jit"; }

 private:
  std::shared_ptr<Engine> engine_;
  std::string name_;
};

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The compile's stages in a profile (ag/profiler.h): the plan (with its key and disk lookup),
// the wait for the engine and a disk hit's link as measured; the IR, optimization, codegen and
// link laid end to end from their durations (CompileTimes).
void profile_stages(const std::string& name, detail::ProfileClock::time_point t0, detail::ProfileClock::time_point planned,
                    detail::ProfileClock::time_point engine, detail::ProfileClock::time_point loaded, const CompileTimes& times,
                    bool from_disk) {
  detail::profile_event("compile", fmt::format("jit: plan {} + key + disk lookup", name), t0, planned);
  detail::profile_event("compile", "jit: engine", planned, engine);
  if (from_disk) {
    detail::profile_event("compile", "jit: link (disk cache hit)", engine, loaded);
    return;
  }
  detail::ProfileClock::time_point at = engine;
  const std::pair<const char*, double> stages[] = {
      {"jit: LLVM IR", times.lower_ms}, {"jit: optimize", times.optimize_ms}, {"jit: codegen", times.codegen_ms},
      {"jit: link", times.link_ms}};
  for (const auto& [stage, ms] : stages) {
    const auto end = at + std::chrono::duration_cast<detail::ProfileClock::duration>(std::chrono::duration<double, std::milli>(ms));
    detail::profile_event("compile", stage, at, end);
    at = end;
  }
}

class JitBackend final : public CompilerBackend {
 public:
  std::string_view name() const override { return "jit"; }
  std::string target_cpu() const override {
    const detail::ForkGatePass pass;
    return engine()->cpu();
  }

  std::unique_ptr<Executable> compile(std::shared_ptr<const Graph> graph, const CompileOptions& options) override {
    const detail::ForkGatePass pass;  // fork() waits for the compile (LLVM's locks; fork_safety.h)
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    // Reads AG_NUM_THREADS now, where a bad value is a ValueError of this call: compiled code
    // that reaches the pool (agc_rt_parallel_for) has no way to raise one.
    detail::parallel_threads();
    // The settings, read before waiting for the engine that the warm-up thread may still be
    // creating: the cache size a streaming store depends on is a read of sysfs, once a process
    // (docs/performance.md, "Measured decisions": settings first).
    const JitConfig config = JitConfig::from_environment();
    const int level = config.opt_level;
    // The plan, its key and the disk cache's entry come before the engine, which the warm-up
    // thread may still be creating in a new process: they overlap its creation (a disk hit's
    // first call waited for the engine, then planned and read the file).
    auto exe = std::make_unique<JitExecutable>(std::move(graph), nullptr, options.name.empty() ? "fn" : options.name, config);
    const Program& program = exe->program();
    auto key_for = [&](const std::string& target_id) {
      return cache_key(*program.graph, target_id + "|" + config.key() + (program.rolled_loops ? "|rolled" : ""));
    };
    std::string target_id = Engine::target_id_for_environment();
    CacheKey key = key_for(target_id);
    DiskCache* disk = DiskCache::current();
    std::optional<std::string> cached = disk ? disk->load(key) : std::nullopt;
    const auto t_planned = Clock::now();
    std::shared_ptr<Engine> engine = this->engine();
    const auto t_engine = Clock::now();
    exe->set_engine(engine);
    if (engine->target_id() != target_id) {  // AG_JIT_CPU changed after the engine was created
      key = key_for(engine->target_id());
      cached = disk ? disk->load(key) : std::nullopt;
    }
    if (cached) {
      try {
        exe->set_handle(engine->load_object(*cached, options.name), /*from_disk=*/true);
      } catch (const InternalError& e) {
        disk->discard(key, e.what());
      }
    }
    const auto t_loaded = Clock::now();
    CompileTimes times;
    std::string object;
    if (!exe->loaded_from_disk()) {
      exe->set_handle(engine->compile(exe->program(), options.name, /*parallel=*/!options.background,
                                      disk ? &object : nullptr, &times),
                      /*from_disk=*/false);
      if (disk) disk->store(key, object);
    }
    if (detail::profiling()) profile_stages(options.name, t0, t_planned, t_engine, t_loaded, times, exe->loaded_from_disk());
    if (detail::log_enabled(detail::LogTopic::Compile)) {
      auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
      const std::string kernels =
          times.kernels_apart ? fmt::format(" + {} kernel{} as a second module {:.2f} ms{} (bitcode {:.2f} ms, optimize {:.2f} ms, codegen {:.2f} ms)",
                                            times.kernels_apart, times.kernels_apart > 1 ? "s" : "",
                                            times.kernels_optimize_ms + times.kernels_codegen_ms,
                                            times.kernels_in_parallel ? " on a second thread" : "", times.split_ms,
                                            times.kernels_optimize_ms, times.kernels_codegen_ms)
                              : "";
      const std::string shared =
          times.kernels_shared ? fmt::format(" + {} kernel{} shared (compiled before in this process; named in {:.2f} ms)",
                                             times.kernels_shared, times.kernels_shared > 1 ? "s" : "", times.naming_ms)
          : times.naming_ms > 0 ? fmt::format(" (kernels named in {:.2f} ms)", times.naming_ms)
                                : "";
      detail::log_line(fmt::format("agc: jit: {}: plan + key + disk lookup {:.2f} ms, engine {:.2f} ms, IR {:.2f} ms, "
                                   "optimize {:.2f} ms, codegen {:.2f} ms{}{}, link {:.2f} ms (O{}{}, {} loop nests{}{}{}, {}){}",
                                   options.name, ms(t0, t_planned), ms(t_planned, t_engine), times.lower_ms, times.optimize_ms,
                                   times.codegen_ms, kernels, shared, times.link_ms, level, times.short_pipeline ? " short pipeline" : level == 2 ? " agc pipeline" : "",
                                   program.loop_nests, program.rolled_loops ? " rolled" : "",
                                   program.packed_operands
                                       ? fmt::format(", {} loop-invariant GEMM operand{} packed before the loop",
                                                     program.packed_operands, program.packed_operands > 1 ? "s" : "")
                                       : "",
                                   program.pulled_segments
                                       ? fmt::format(", {} segment sum{} pulled by segment", program.pulled_segments,
                                                     program.pulled_segments > 1 ? "s" : "")
                                       : "",
                                   exe->loaded_from_disk() ? "disk cache hit" : disk ? "stored in " + disk->dir() : "disk cache off",
                                   object.empty() ? "" : fmt::format(", object {} bytes", object.size())));
    }
    if (!options.dump_prefix.empty()) {
      write_file(options.dump_prefix + ".ll", exe->llvm_ir(false));
      write_file(options.dump_prefix + ".opt.ll", exe->llvm_ir(true));
      write_file(options.dump_prefix + ".s", exe->assembly());
      write_file(options.dump_prefix + ".fused.graph.txt", plan_graph_text(exe->program()));
      write_file(options.dump_prefix + ".fused.dot", plan_graph_dot(exe->program()));
    }
    return exe;
  }

  void warm_up() override {
    const detail::ForkGatePass pass;
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<Engine> engine = this->engine();
    const double engine_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double compile_ms = engine->warm_up();
    if (detail::log_enabled(detail::LogTopic::Compile))
      detail::log_line(compile_ms > 0 ? fmt::format("agc: jit: warm-up (background): engine {:.2f} ms, a small module "
                                                    "optimized and compiled in {:.2f} ms",
                                                    engine_ms, compile_ms)
                                      : fmt::format("agc: jit: warm-up (background): engine {:.2f} ms, no compile (the "
                                                    "first one had begun)",
                                                    engine_ms));
  }

  // A saved model's machine code (ag/detail/object_code.h): linked, not compiled.
  std::unique_ptr<Executable> load_saved(std::shared_ptr<const Graph> graph, std::string_view object, const std::string& name) {
    const detail::ForkGatePass pass;
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<Engine> engine = this->engine();
    auto exe = std::make_unique<JitExecutable>(std::move(graph), engine, name, JitConfig::from_environment());
    exe->set_handle(engine->load_object(object, name), /*from_disk=*/true);
    if (detail::log_enabled(detail::LogTopic::Compile))
      detail::log_line(fmt::format("agc: jit: {}: linked the saved model's code ({} bytes) in {:.2f} ms", name, object.size(),
                                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()));
    return exe;
  }

  // At exit: compiled code still alive keeps the engine; otherwise it is torn down here.
  void release_engine() {
    std::lock_guard lock(mu_);
    engine_.reset();
  }

 private:
  std::shared_ptr<Engine> engine() const {
    std::lock_guard lock(mu_);
    if (!engine_) engine_ = Engine::get();
    return engine_;
  }
  mutable std::mutex mu_;
  mutable std::shared_ptr<Engine> engine_;  // kept for the process; compiled code holds it too
};

JitBackend& backend() {
  static JitBackend* b = new JitBackend;  // never destroyed: a late caller finds it unregistered
  return *b;
}

// The machine code of saved models (SaveOptions::compiled_for): objects compiled as ag-aot
// compiles them, with the JIT's entry symbol, so that load_object links them.
std::string compile_saved(std::shared_ptr<const Graph> graph, const std::string& cpu, const std::string& name) {
  const detail::ForkGatePass pass;
  const JitConfig config = JitConfig::from_environment();
  Program program = plan_program(std::move(graph));
  apply_config(program, config);
  return compile_aot_object(program, name, cpu, kEntrySymbol);
}
bool can_run_saved(const std::string& cpu) { return cpu_level_fits(cpu); }
std::unique_ptr<Executable> load_saved(std::shared_ptr<const Graph> graph, std::string_view object, const std::string& name) {
  return backend().load_saved(std::move(graph), object, name);
}
constexpr detail::ObjectCodeHooks kObjectCode{&compile_saved, &can_run_saved, &load_saved};

struct Registrar {
  Registrar() {
    set_compiler_backend(&backend());
    detail::set_object_code_hooks(&kObjectCode);
  }
  ~Registrar() {
    detail::set_object_code_hooks(nullptr);
    set_compiler_backend(nullptr);
    backend().release_engine();
  }
};
const Registrar registrar;

}  // namespace
}  // namespace ag::jit

// Referenced by agc::jit's link options so a static link keeps this object (and its registrar).
extern "C" void agc_jit_anchor() {}
