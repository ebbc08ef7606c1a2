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
#include "ag/detail/ops_internal.h"
#include "ag/detail/out_of_memory.h"
#include "ag/detail/parked_tensor.h"
#include "ag/detail/parallel.h"
#include "call_state.h"
#include "disk_cache.h"
#include "engine.h"
#include "graph_key.h"
#include "plan_dump.h"

namespace ag::jit {
namespace {

// A view of `t`'s buffer with other dims (results that alias a parameter, constant or slot).
Tensor with_dims(const Tensor& t, const int64_t* dims, int64_t rank) {
  const Shape shape(std::span<const int64_t>(dims, static_cast<size_t>(rank)));
  if (t.dtype() == DType::List || t.shape() == shape) return t;
  detail::TensorImpl* impl = detail::impl_of(t);
  const size_t offset = static_cast<size_t>(static_cast<char*>(impl->data) - static_cast<char*>(impl->storage->data));
  return detail::make_view(impl->storage, offset, t.dtype(), shape);
}

// Result k of static shape, allocated before the call: the thread's parked tensor when it fits
// (inline: a loop of cached calls takes back the output its previous call's result left), else
// a new one. Out of memory names the op that computes it; the results allocated so far are
// dropped. Inlined into the cached call's path (its out-of-memory handler costs nothing until
// it runs).
[[gnu::always_inline]] inline Tensor allocate_result(const Program& p, std::span<Tensor> outputs, size_t k) {
  const ResultPlan& r = p.results[k];
  if (detail::TensorImpl* parked = detail::unpark(r.type.dtype, r.type.shape)) [[likely]]
    return detail::adopt(parked);
  try {
    return detail::make_tensor(r.type.dtype, r.type.shape);
  } catch (const detail::TensorAllocationFailure& f) {
    for (Tensor& t : outputs) t = Tensor();
    const Node& n = p.graph->nodes[p.graph->results[k].node];
    throw detail::out_of_memory(detail::user_op_name(n.op), f.dtype, f.shape, n.loc);
  }
}

// Calls compiled code. UBSan's -fsanitize=function checks a signature word in front of an
// indirect callee, which JIT code does not have: that check is off for this one call.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
int32_t call_entry(EntryFn entry, const JitArg* args, JitCallCtx* ctx) {
  return entry(args, ctx);
}

class JitExecutable final : public Executable {
 public:
  JitExecutable(std::shared_ptr<const Graph> graph, std::shared_ptr<Engine> engine, std::string name, const JitConfig& config)
      : program_(plan_program(std::move(graph))), engine_(std::move(engine)), name_(std::move(name)) {
    program_.config = config;
    program_.rolled_loops = config.rolled(program_.loop_nests);
    consts_.assign(program_.nodes.size(), nullptr);
    for (size_t id = 0; id < program_.nodes.size(); ++id) {
      const Node* n = program_.nodes[id].node;
      if (n && n->op == OpKind::Const && n->attrs.value.has_value() && n->attrs.value.dtype() != DType::List)
        consts_[id] = detail::impl_of(n->attrs.value)->data;
      // Variable ops: their VariableState, which the native lowering passes to its helpers.
      if (n && op_class(n->op) == OpClass::Stateful && n->attrs.variable) consts_[id] = n->attrs.variable.get();
    }
    for (int32_t slot : program_.param_slots) has_param_slots_ |= slot >= 0;
    for (const ResultPlan& r : program_.results) needs_fixup_ |= !(r.kind == ResultKind::Computed && r.static_shape);
    simple_ = !needs_fixup_ && !has_param_slots_ && program_.num_slots == 0 &&
              program_.graph->params.size() <= kInline && program_.results.size() <= kInline;
    num_results_ = program_.results.size();
  }

  void set_code(std::shared_ptr<CodeHandle> code, bool from_disk) {
    code_ = std::move(code);
    entry_ = code_->entry();
    from_disk_ = from_disk;
  }
  // The same machine code: the graph differs only in its Variables, which the code finds in the
  // consts table at run time (graph_key.cpp keys a variable by its type alone).
  std::unique_ptr<Executable> rebound(std::shared_ptr<const Graph> graph) const override {
    auto exe = std::make_unique<JitExecutable>(std::move(graph), engine_, name_, program_.config);
    exe->set_code(code_, from_disk_);
    return exe;
  }
  const Program& program() const { return program_; }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    if (simple_) [[likely]]
      run_simple([&](size_t p) { return detail::impl_of(inputs[p]); }, inputs.size(), outputs);
    else
      run_general(inputs, outputs);
  }
  // The cached call's path: the argument views give the inputs' data and dims directly.
  void run_tensor_args(std::span<const detail::ArgView> args, std::span<Tensor> outputs) const override {
    if (simple_) [[likely]]
      run_simple([&](size_t p) { return detail::impl_of(args[p].tensor()); }, args.size(), outputs);
    else
      Executable::run_tensor_args(args, outputs);
  }

  // Inspection runs LLVM: under a fork-gate pass, as compiles (fork_safety.h).
  std::string llvm_ir(bool optimized) const override {
    const detail::ForkGatePass pass;
    return engine_->ir(program_, name_, optimized);
  }
  std::string assembly() const override {
    const detail::ForkGatePass pass;
    return engine_->assembly(program_, name_);
  }
  std::string plan_text() const override { return plan_graph_text(program_); }
  MappedText llvm_ir_mapped(bool optimized) const override {
    const detail::ForkGatePass pass;
    return engine_->ir_by_node(program_, name_, optimized);
  }
  MappedText assembly_mapped() const override {
    const detail::ForkGatePass pass;
    return engine_->assembly_by_node(program_, name_);
  }
  std::string plan_dot() const override { return plan_graph_dot(program_); }
  bool loaded_from_disk() const override { return from_disk_; }
  std::string_view backend_name() const override { return "jit"; }

 private:
  static constexpr size_t kInline = 16;

  // The common case, kept lean for the cached-call path: few inputs and results, no slots,
  // every result computed into a buffer allocated here (no heap but the outputs). `input(p)`:
  // input p's tensor.
  template <class Input>
  void run_simple(const Input& input, size_t nin, std::span<Tensor> outputs) const {
    JitArg args[kInline];
    void* out_data[kInline];
    int64_t out_dims[kInline * kMaxRank];
    const size_t nout = num_results_;
    for (size_t p = 0; p < nin; ++p) {
      const detail::TensorImpl* impl = input(p);
      args[p] = {impl->data, impl->shape.data()};
    }
    for (size_t k = 0; k < nout; ++k) {
      outputs[k] = allocate_result(program_, outputs, k);
      out_data[k] = detail::impl_of(outputs[k])->data;
    }
    CallState st;
    st.program = &program_;
    st.outputs = outputs;
    JitCallCtx ctx{out_data, out_dims, consts_.data(), &st};
    if (call_entry(entry_, args, &ctx) != 0) [[unlikely]]
      fail(st, outputs);
    if (st.owns_buffers()) [[unlikely]]
      st.release_owned();  // defensive: the code frees what it allocates
  }

  [[noreturn]] static void fail(CallState& st, std::span<Tensor> outputs) {
    st.release_owned();
    for (Tensor& t : outputs) t = Tensor();
    if (st.error) std::rethrow_exception(st.error);
    throw InternalError("jit: compiled code failed without an error");
  }

  void run_general(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
    const size_t nin = inputs.size(), nout = program_.results.size();
    JitArg inline_args[kInline];
    void* inline_out[kInline];
    int64_t inline_dims[kInline * kMaxRank];
    std::vector<JitArg> heap_args;
    std::vector<void*> heap_out;
    std::vector<int64_t> heap_dims;
    JitArg* args = inline_args;
    void** out_data = inline_out;
    int64_t* out_dims = inline_dims;
    if (nin > kInline) args = (heap_args.resize(nin), heap_args.data());
    if (nout > kInline) {
      out_data = (heap_out.resize(nout), heap_out.data());
      out_dims = (heap_dims.resize(nout * kMaxRank), heap_dims.data());
    }
    for (size_t p = 0; p < nin; ++p) {
      detail::TensorImpl* impl = detail::impl_of(inputs[p]);
      args[p] = {impl->data, impl->shape.data()};
    }
    CallState st;
    st.program = &program_;
    st.outputs = outputs;
    if (program_.num_slots) st.slots().resize(static_cast<size_t>(program_.num_slots));
    if (has_param_slots_)
      for (size_t p = 0; p < nin; ++p)
        if (program_.param_slots[p] >= 0) st.slots()[static_cast<size_t>(program_.param_slots[p])] = inputs[p];
    for (size_t k = 0; k < nout; ++k) {
      const ResultPlan& r = program_.results[k];
      out_data[k] = nullptr;
      if (r.kind == ResultKind::Computed && r.static_shape) {
        outputs[k] = allocate_result(program_, outputs, k);
        out_data[k] = detail::impl_of(outputs[k])->data;
      }
    }
    JitCallCtx ctx{out_data, out_dims, consts_.data(), &st};
    if (call_entry(entry_, args, &ctx) != 0) fail(st, outputs);
    if (st.owns_buffers()) [[unlikely]]
      st.release_owned();  // defensive: the code frees what it allocates
    if (!needs_fixup_) return;
    for (size_t k = 0; k < nout; ++k) {
      const ResultPlan& r = program_.results[k];
      const int64_t* dims = out_dims + k * kMaxRank;
      const int64_t rank = r.type.shape.rank();
      switch (r.kind) {
        case ResultKind::FromParam: outputs[k] = with_dims(inputs[static_cast<size_t>(r.index)], dims, rank); break;
        case ResultKind::FromConst:
          outputs[k] = with_dims(program_.nodes[static_cast<size_t>(r.index)].node->attrs.value, dims, rank);
          break;
        case ResultKind::FromSlot: outputs[k] = with_dims(st.slots()[static_cast<size_t>(r.index)], dims, rank); break;
        case ResultKind::Computed:
          if (!r.static_shape) outputs[k] = with_dims(outputs[k], dims, rank);
          break;
      }
    }
  }

  Program program_;
  std::shared_ptr<Engine> engine_;
  std::string name_;
  std::vector<const void*> consts_;
  std::shared_ptr<CodeHandle> code_;  // shared by the executables rebound() makes
  EntryFn entry_ = nullptr;
  bool from_disk_ = false;
  bool has_param_slots_ = false;  // TensorArray arguments go to slots
  bool needs_fixup_ = false;      // some result is a view or has a shape known only at run time
  bool simple_ = false;           // run_simple() applies
  size_t num_results_ = 0;
};

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

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
    std::shared_ptr<Engine> engine = this->engine();
    const auto t_engine = Clock::now();
    auto exe = std::make_unique<JitExecutable>(std::move(graph), engine, options.name.empty() ? "fn" : options.name, config);
    const Program& program = exe->program();
    const CacheKey key = cache_key(*program.graph, engine->target_id() + "|" + config.key() +
                                                       (program.rolled_loops ? "|rolled" : ""));
    DiskCache* disk = DiskCache::current();
    if (disk) {
      if (std::optional<std::string> object = disk->load(key)) {
        try {
          exe->set_code(engine->load_object(*object, options.name), /*from_disk=*/true);
        } catch (const InternalError& e) {
          disk->discard(key, e.what());
        }
      }
    }
    const auto t_planned = Clock::now();
    CompileTimes times;
    std::string object;
    if (!exe->loaded_from_disk()) {
      exe->set_code(engine->compile(exe->program(), options.name, /*parallel=*/!options.background,
                                    disk ? &object : nullptr, &times),
                    /*from_disk=*/false);
      if (disk) disk->store(key, object);
    }
    if (detail::log_enabled(detail::LogTopic::Compile)) {
      auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
      const std::string kernels =
          times.kernels_apart ? fmt::format(" + {} kernel{} as a second module {:.2f} ms{} (bitcode {:.2f} ms)", times.kernels_apart,
                                            times.kernels_apart > 1 ? "s" : "", times.kernels_ms,
                                            times.kernels_in_parallel ? " on a pool thread" : "", times.split_ms)
                              : "";
      detail::log_line(fmt::format("agc: jit: {}: engine {:.2f} ms, plan + key + disk lookup {:.2f} ms, IR {:.2f} ms, "
                                   "optimize {:.2f} ms, codegen {:.2f} ms{}, link {:.2f} ms (O{}{}, {} loop nests{}, {}){}",
                                   options.name, ms(t0, t_engine), ms(t_engine, t_planned), times.lower_ms, times.optimize_ms,
                                   times.codegen_ms, kernels, times.link_ms, level, times.short_pipeline ? " short pipeline" : "",
                                   program.loop_nests, program.rolled_loops ? " rolled" : "",
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

struct Registrar {
  Registrar() { set_compiler_backend(&backend()); }
  ~Registrar() {
    set_compiler_backend(nullptr);
    backend().release_engine();
  }
};
const Registrar registrar;

}  // namespace
}  // namespace ag::jit

// Referenced by agc::jit's link options so a static link keeps this object (and its registrar).
extern "C" void agc_jit_anchor() {}
