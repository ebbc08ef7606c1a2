// ConcreteCore: lazy compilation, argument checks, running.
#include "concrete.h"

#include "ag/detail/fork_safety.h"
#include "ag/detail/tape.h"
#include "../grad/call_backward.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "ag/detail/function_core.h"
#include "ag/graph/passes.h"
#include "ag/detail/log.h"
#include "ag/detail/profiler.h"
#include "ag/detail/tensor_buffer.h"
#include "ag/detail/variable_state.h"
#include "ag/variable.h"
#include "ag/detail/function_observer.h"
#include "background_compiler.h"
#include "variable_binding.h"

namespace ag::detail {

namespace {

// The floating-point tensors `g` holds as constants (captured while tracing), sub-graphs included.
std::vector<Tensor> captured_constants(const Graph& g) {
  std::vector<Tensor> out;
  auto visit = [&](auto& self, const Graph& graph) -> void {
    for (const Node& n : graph.nodes) {
      if (n.op == OpKind::Const && is_floating(n.attrs.value.dtype())) out.push_back(n.attrs.value);
      for (const auto& sub : n.subgraphs) self(self, *sub);
    }
  };
  visit(visit, g);
  return out;
}

}  // namespace

ConcreteCore::ConcreteCore(std::string name, Signature signature, std::shared_ptr<const Graph> traced,
                           std::shared_ptr<const Graph> optimized, std::optional<bool> jit, std::shared_ptr<StatCounters> stats,
                           std::string dump_prefix, bool tiered)
    : name_(std::move(name)),
      signature_(std::move(signature)),
      traced_(std::move(traced)),
      graph_(std::move(optimized)),
      jit_(jit),
      stats_(std::move(stats)),
      dump_prefix_(std::move(dump_prefix)),
      tiered_(tiered && jit_.value_or(true) && compiler_backend() != nullptr),
      reads_variables_(!variables_read(*traced_).empty()),
      captured_(captured_constants(*traced_)),
      one_op_under_tape_(differentiable_as_a_call(*traced_)),
      tensor_args_only_(std::all_of(signature_.args.begin(), signature_.args.end(),
                                    [](const ArgSig& a) { return a.kind == ArgKind::Tensor; })),
      has_variable_args_(std::any_of(signature_.args.begin(), signature_.args.end(),
                                     [](const ArgSig& a) { return a.kind == ArgKind::Variable; })) {}

bool ConcreteCore::binds(std::span<const ArgView> args) const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == ArgKind::Variable && &variable_of(args[i]) != signature_.args[i].variable.get()) return false;
  return true;
}

ConcreteCore& ConcreteCore::bound_to(std::span<const ArgView> args, std::shared_ptr<ConcreteCore>& hold) {
  if (!has_variable_args_ || binds(args)) [[likely]]
    return *this;
  std::lock_guard lock(bound_mu_);
  auto found = std::find_if(bound_.begin(), bound_.end(), [&](const auto& b) { return b->binds(args); });
  if (found != bound_.end()) {
    std::rotate(bound_.begin(), found, found + 1);  // most recent first
  } else {
    if (bound_.size() == kMaxBound) bound_.pop_back();
    bound_.insert(bound_.begin(), make_bound(args));
  }
  hold = bound_.front();
  return *hold;
}

std::shared_ptr<ConcreteCore> ConcreteCore::make_bound(std::span<const ArgView> args) {
  VariableRebinding rebinding;
  Signature sig = signature_;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgKind::Variable) continue;
    const std::shared_ptr<VariableState>& state = static_cast<const Variable*>(args[i].ptr)->state();
    if (!rebinding.find(signature_.args[i].variable.get())) rebinding.add(signature_.args[i].variable.get(), state);
    sig.args[i].variable = state;
  }
  auto core = std::make_shared<ConcreteCore>(name_, std::move(sig), rebind_variables(traced_, rebinding),
                                             rebind_variables(graph_, rebinding), jit_, stats_, dump_prefix_, tiered_);
  // Compiled already: the bound one runs the same machine code (no compile, no disk lookup).
  if (const Executable* exe = exe_.load(std::memory_order_acquire))
    if (std::unique_ptr<Executable> rebound = exe->rebound(core->graph_)) {
      core->exe_owned_ = std::move(rebound);
      core->publish(core->exe_owned_.get());
    }
  return core;
}

const std::shared_ptr<const CallBackward>& ConcreteCore::backward() {
  const ForkGatePass pass;
  std::lock_guard lock(compile_mu_);
  if (!backward_) backward_ = std::make_shared<CallBackward>(traced_, name_, jit_);
  return backward_;
}

std::string ConcreteCore::signature_str() const {
  std::string out;
  for (size_t i = 0; i < graph_->results.size(); ++i) {
    const TensorType& t = graph_->type(graph_->results[i]);
    out += (i ? ", " : "") + (t.has_unknown_rank() ? TensorSpec::unknown_rank(t.dtype) : TensorSpec(t.shape, t.dtype)).str();
  }
  if (graph_->results.size() != 1) out = "(" + out + ")";
  return fmt::format("{}({}) -> {}", name_, signature_.params_str(), out);
}

const Executable& ConcreteCore::compile(bool background) {
  const ForkGatePass pass;  // fork() waits for a compile in progress (compile_mu_, LLVM's locks)
  std::lock_guard lock(compile_mu_);
  if (const Executable* e = exe_.load(std::memory_order_acquire)) return *e;
  exe_owned_ = build_executable(graph_, background, dump_prefix_, "");
  publish(exe_owned_.get());
  if (FunctionObserver* o = function_observer()) o->concrete_compiled(*this);
  return *exe_owned_;
}

void ConcreteCore::publish(const Executable* e) {
  exe_.store(e, std::memory_order_release);
  const auto* stub = dynamic_cast<const CallStub*>(e);
  if (stub && stub->stub_fn() && tensor_args_only_) stub_.store(stub, std::memory_order_release);
}

const Executable& ConcreteCore::checked_executable() {
  if (const Executable* e = checked_exe_.load(std::memory_order_acquire)) [[likely]]
    return *e;
  const ForkGatePass pass;
  std::lock_guard lock(compile_mu_);
  if (const Executable* e = checked_exe_.load(std::memory_order_acquire)) return *e;
  // From the traced graph, reductions kept whole: each check names the op and element eager
  // execution would (docs/debugging.md).
  auto checked = std::make_shared<const Graph>(
      insert_numeric_checks(optimize(*traced_, OptimizeOptions{.unroll_short_reductions = false})));
  checked_owned_ = build_executable(std::move(checked), false, dump_prefix_.empty() ? "" : dump_prefix_ + ".checked",
                                    " (numeric checks)");
  checked_exe_.store(checked_owned_.get(), std::memory_order_release);
  return *checked_owned_;
}

std::unique_ptr<Executable> ConcreteCore::build_executable(std::shared_ptr<const Graph> graph, bool background,
                                                           const std::string& dump_prefix, const char* variant) {
  CompilerBackend* backend = jit_.value_or(true) ? compiler_backend() : nullptr;
  if (!backend && jit_ == true)
    throw Error(fmt::format("{}: jit_compile = true, but no JIT backend is linked into this program; link the CMake "
                            "target agc::agc (or agc::jit), or leave jit_compile unset to run on the graph interpreter",
                            signature_str()));
  // Compiled code is specialized to ranks: a graph with a value of unknown rank (an unknown-rank
  // TensorSpec, an if whose branches give different ranks) runs on the interpreter, which types
  // each op from its run-time inputs (docs/guide.md, "Unknown ranks").
  if (const std::string v = backend ? first_unknown_rank_value(*graph) : std::string(); !v.empty()) {
    if (jit_ == true)
      throw UnimplementedError(fmt::format("{}: jit_compile = true, but value {} has an unknown rank, and compiled "
                                           "code needs every rank; give it one with ag::ensure_shape",
                                           signature_str(), v));
    log_line(fmt::format("agc: compile: {}: runs on the graph interpreter: value {} has an unknown rank",
                         signature_str(), v));
    backend = nullptr;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const ProfileScope profile("compile", [&] { return fmt::format("compile {}{}", signature_str(), variant); });
  std::unique_ptr<Executable> exe;
  if (backend) {
    CompileOptions opts;
    opts.name = name_;
    opts.dump_prefix = dump_prefix;
    opts.background = background;
    exe = backend->compile(std::move(graph), opts);
    (exe->loaded_from_disk() ? stats_->disk_hits : stats_->compiles).fetch_add(1);
  } else {
    exe = make_interpreter(std::move(graph));
  }
  if (log_enabled(LogTopic::Compile)) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    log_line(fmt::format("agc: compile: {}{} with {}{}: {:.2f} ms", signature_str(), variant, exe->backend_name(),
                         exe->loaded_from_disk() ? " (disk cache hit)" : "", ms));
  }
  return exe;
}

std::shared_ptr<const CodeTexts> ConcreteCore::code_texts(bool make) {
  const ForkGatePass pass;
  std::lock_guard lock(texts_mu_);
  if (texts_ || !make) return texts_;
  const Executable* exe = exe_.load(std::memory_order_acquire);
  if (!exe) return nullptr;
  auto t = std::make_shared<CodeTexts>();
  t->backend = std::string(exe->backend_name());
  try {
    t->plan = exe->plan_text();
    t->ir = exe->llvm_ir_mapped(false);
    t->ir_opt = exe->llvm_ir_mapped(true);
    t->assembly = exe->assembly_mapped();
  } catch (const std::exception& e) {
    t->error = e.what();
  }
  texts_ = std::move(t);
  return texts_;
}

Executable& ConcreteCore::tier_interpreter() {
  std::call_once(interpreter_once_, [&] { interpreter_ = make_interpreter(graph_); });
  return *interpreter_;
}

const Executable& ConcreteCore::interpreter_while_compiling() {
  const Executable& interpreter = tier_interpreter();
  if (!compile_queued_.exchange(true)) {
    if (log_enabled(LogTopic::Compile))
      log_line(fmt::format("agc: compile: {}: tiered: calls run on the interpreter until the background compile is done",
                           signature_str()));
    enqueue_background_compile(shared_from_this());
  }
  stats_->interpreted_calls.fetch_add(1, std::memory_order_relaxed);
  return interpreter;
}

void ConcreteCore::compile_in_background() {
  try {
    compile(/*background=*/true);
  } catch (const std::exception& e) {
    log_line(fmt::format("agc: warning: the background compile of {} failed, so it keeps running on the graph "
                         "interpreter: {}",
                         signature_str(), e.what()));
    exe_.store(&tier_interpreter(), std::memory_order_release);
  }
}

void ConcreteCore::run_any(std::span<const ArgView> args, std::span<Tensor> outputs) {
  const ProfileScope profile("call", [&] { return signature_str(); });
  std::shared_ptr<ConcreteCore> hold;
  if (ConcreteCore& bound = bound_to(args, hold); &bound != this) {
    bound.run_any(args, outputs);
    return;
  }
  // enable_check_numerics(): the code compiled with the checks, a second executable.
  const bool checks = check_numerics_enabled();
  // AG_CHECK=eager: every call compared with the eager kernels (compare_with_eager.cpp).
  if (call_hook_on(CallHook::CheckEager) && !tapes_alive() && jit_ != false && compiler_backend()) [[unlikely]] {
    const debugging::EagerComparison r = compare_with_eager(args, {}, outputs);
    if (!r.equal())
      throw InternalError(r.str() + " (AG_CHECK=eager: compiled code must agree with the eager kernels; please report it)");
    return;
  }
  const Executable& exe = checks ? checked_executable() : executable();
  if (tensor_args_only_ && !tapes_alive()) [[likely]] {
    exe.run_tensor_args(args, outputs);
    return;
  }
  BorrowedTensors<16> inputs(graph_->params.size());
  for_each_tensor(args, [&](const Tensor& t) { inputs.push_back(t); });
  const std::span<const Tensor> in(inputs.data(), inputs.size());
  if (tapes_alive() && (eager_tape_follows(in, reads_variables_) || eager_tape_follows(captured_, false))) [[unlikely]] {
    // A tape follows an argument or watches the Variables the graph reads (docs/gradients.md,
    // "Functions under a tape"): the call is one op whose gradient is a compiled backward
    // function; a graph with side effects, or one whose captured tensor the tape watches, runs
    // op by op instead, recorded op by op.
    // With numeric checks on, op by op too: each op is checked as it runs.
    if (checks || !one_op_under_tape_ || eager_tape_follows(captured_, false)) {
      replay_graph(*traced_, in, outputs);
      return;
    }
    const std::shared_ptr<const CallBackward>& pair = backward();
    std::vector<Tensor> residuals = pair->run_forward(in, outputs);  // the forward half of the pair
    tape_record_call(pair, in, outputs, std::move(residuals));
    return;
  }
  exe.run(in, outputs);
}

void ConcreteCore::check_call(std::span<const ArgView> args) const {
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSig& s = signature_.args[i];
    const ArgView& a = args[i];
    // Built only on the error paths: a successful check builds no strings (docs/performance.md, the cached call).
    // elem >= 0: an element of a container ("argument 1 'ws'[2]").
    auto label = [&](int64_t elem = -1) {
      const std::string at = elem < 0 ? std::string() : fmt::format("[{}]", elem);
      return s.name.empty() ? fmt::format("argument {}{}", s.param, at)
                            : fmt::format("argument {} '{}'{}", s.param, s.name, at);
    };
    auto check_tensor = [&](const Tensor& t, const ArgSig& expected, int64_t elem) {
      if (!t.has_value()) throw ValueError(fmt::format("{}: {} has no value", signature_str(), label(elem)));
      if (t.dtype() != expected.dtype)
        throw TypeError(fmt::format("concrete function {}: {} has dtype {}, expected {}", signature_str(), label(elem),
                                    dtype_name(t.dtype()), dtype_name(expected.dtype)));
      if (!expected.rank_unknown && !expected.shape.is_compatible_with(t.shape()))
        throw ValueError(fmt::format("concrete function {}: {} has shape {}, expected {}", signature_str(), label(elem),
                                     t.shape().tf_str(), expected.shape.tf_str()));
    };
    switch (a.kind) {
      case ArgKind::Tensor: check_tensor(a.tensor(), s, -1); break;
      case ArgKind::TensorList:
        if (a.count() != s.elems.size())
          throw ValueError(fmt::format("concrete function {}: {} has {} tensor(s), expected {}", signature_str(), label(),
                                       a.count(), s.elems.size()));
        for (size_t k = 0; k < a.count(); ++k) check_tensor(a.tensors()[k], s.elems[k], static_cast<int64_t>(k));
        break;
      case ArgKind::ScalarList: {
        bool same = a.count() == s.elems.size();
        for (size_t k = 0; same && k < a.count(); ++k) {
          same = scalar_key_bits(s.elems[k]) == a.scalar_at(a.ptr, k);
        }
        if (!same) {
          const ArgSig got = describe(std::span<const ArgView>(&a, 1), SignatureRules{}).args[0];
          throw TypeError(fmt::format("concrete function {}: {} was traced with the value {}, got {}; plain C++ "
                                      "arguments are part of the signature (call the Function to trace another value)",
                                      signature_str(), label(), value_str(s), value_str(got)));
        }
        break;
      }
      case ArgKind::Variable:
        if (!same_variable_spec(*s.variable, variable_of(a)))
          throw TypeError(fmt::format("concrete function {}: {} is the Variable {}, expected a Variable of {}",
                                      signature_str(), label(), variable_of(a).describe(),
                                      TensorSpec(s.variable->shape, s.variable->dtype).str()));
        if (variable_alias(signature_, i) != variable_alias(args, i))
          throw ValueError(fmt::format("concrete function {}: {} {} the same Variable as an earlier argument where the "
                                       "trace had {}; call the Function to trace this aliasing",
                                       signature_str(), label(), variable_alias(args, i) ? "is" : "is not",
                                       variable_alias(signature_, i) ? "one Variable" : "different Variables"));
        break;
      case ArgKind::Bool:
      case ArgKind::Int:
        if (a.i != s.i)
          throw TypeError(fmt::format("concrete function {}: {} was traced with the value {}, got {}; plain C++ "
                                      "arguments are part of the signature (call the Function to trace another value)",
                                      signature_str(), label(), s.i, a.i));
        break;
      case ArgKind::Float:
        if (a.f != s.f)
          throw TypeError(fmt::format("concrete function {}: {} was traced with the value {}, got {}; plain C++ "
                                      "arguments are part of the signature (call the Function to trace another value)",
                                      signature_str(), label(), s.f, a.f));
        break;
      case ArgKind::String:
        if (a.s != s.s)
          throw TypeError(fmt::format("concrete function {}: {} was traced with \"{}\", got \"{}\"", signature_str(),
                                      label(), s.s, a.s));
        break;
      case ArgKind::Baked: break;  // left out of the call: the traced value
      case ArgKind::TensorSpec:
      case ArgKind::TensorSpecList: throw InternalError("check_call with a TensorSpec");
    }
  }
}

}  // namespace ag::detail

namespace ag {

void Executable::run_tensor_args(std::span<const detail::ArgView> args, std::span<Tensor> outputs) const {
  detail::BorrowedTensors<16> inputs(args.size());
  for (const detail::ArgView& a : args) inputs.push_back(a.tensor());
  run(std::span<const Tensor>(inputs.data(), inputs.size()), outputs);
}

}  // namespace ag
