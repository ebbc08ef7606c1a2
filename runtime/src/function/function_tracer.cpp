// See function_tracer.h.
#include "function_tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "../trace/frame.h"
#include "ag/backend.h"
#include "ag/detail/log.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/call_hooks.h"
#include "ag/detail/profiler.h"
#include "ag/graph/passes.h"
#include "ag/graph/printer.h"
#include "ag/graph/verifier.h"

namespace ag::detail {
namespace {

// The signatures being traced on this thread, innermost last: a Function may call itself while
// it traces (recursion that ends at trace time, each level a new signature), but not with a
// signature it is tracing (that recursion would not end).
struct ActiveTrace {
  const FunctionTracer* function;
  std::vector<uint64_t> signature;  // its key words
};
thread_local std::vector<ActiveTrace> t_active_traces;

class ActiveTraceScope {
 public:
  ActiveTraceScope(const FunctionTracer* f, std::vector<uint64_t> signature) {
    t_active_traces.push_back({f, std::move(signature)});
  }
  ~ActiveTraceScope() { t_active_traces.pop_back(); }
  ActiveTraceScope(const ActiveTraceScope&) = delete;
  ActiveTraceScope& operator=(const ActiveTraceScope&) = delete;
};

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return s;
}

// No silent fallback: a program that meant to link the JIT and did not is told so, once per
// process, when its first Function traces with jit_compile left unset.
void warn_no_jit_once(const std::string& function_name) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  log_line(fmt::format("agc: warning: no JIT backend is linked into this program, so Function '{}' and every other "
                       "Function run on the graph interpreter (correct, but slower than compiled code). Link the CMake "
                       "target agc::agc (not only agc::runtime) to compile them to machine code, or set "
                       "FunctionOptions::jit_compile = false to choose the interpreter and silence this warning",
                       function_name));
}

}  // namespace

void inline_into_current_frame(const ConcreteCore& c, std::span<const ArgView> args, std::span<Tensor> outputs) {
  if (tape_records_in_current_frame()) {
    std::vector<Tensor> inputs;
    for_each_tensor(args, [&](const Tensor& t) { inputs.push_back(t); });
    replay_graph(c.traced_graph(), inputs, outputs);
    return;
  }
  const Graph& g = c.graph();
  TraceFrame* frame = current_frame();
  std::vector<std::vector<ValueId>> local(g.nodes.size());
  size_t p = 0;
  for_each_tensor(args, [&](const Tensor& t) { local[g.params[p++]] = {frame->value_of(t, OpKind::Identity, {})}; });
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    if (g.nodes[id].op == OpKind::Placeholder) continue;
    Node n = g.nodes[id];
    for (ValueId& v : n.inputs) v = local[v.node][v.index];
    const uint32_t count = static_cast<uint32_t>(n.outputs.size());
    ValueId v = frame->emit(std::move(n));
    for (uint32_t i = 0; i < count; ++i) local[id].push_back({v.node, i});
  }
  for (size_t i = 0; i < g.results.size(); ++i) outputs[i] = frame->symbolic(local[g.results[i].node][g.results[i].index]);
}

FunctionTracer::FunctionTracer(const FunctionInfo& info, const FunctionOptions& options, size_t num_outputs,
                               Tracer body, std::shared_ptr<StatCounters> stats)
    : info_(info),
      options_(options),
      name_ptr_(std::make_shared<const std::string>(info.name)),
      num_outputs_(num_outputs),
      body_(std::move(body)),
      stats_(std::move(stats)) {
  profiler_env_start();    // AG_PROFILE: a profile from the first Function on
  check_eager_env_start();  // AG_CHECK=eager
}

bool FunctionTracer::tracing_on_this_thread(const std::vector<uint64_t>& sig_words) const {
  return std::any_of(t_active_traces.begin(), t_active_traces.end(),
                     [&](const ActiveTrace& t) { return t.function == this && t.signature == sig_words; });
}

void FunctionTracer::throw_recursion(const Signature& sig) const {
  throw ConversionError(fmt::format(
      "Function '{}' calls itself while it is being traced with the signature it is tracing, {}({}): that "
      "recursion would not end at trace time. A recursive Function must call itself with a new signature at each "
      "level (a plain C++ argument that changes, as in TensorFlow's recursive tf.function), or write the "
      "recursion as a loop",
      info_.name, info_.name, sig.params_str()));
}

std::shared_ptr<TraceRoot> FunctionTracer::new_root(bool singleton_check) {
  auto root = std::make_shared<TraceRoot>();
  root->function_name = name_ptr_;
  // Variables may be created on the first trace only, and not on its repeat (singleton_check).
  root->first_trace = !singleton_check && traces_started_.fetch_add(1) == 0;
  root->singleton_check = singleton_check;
  root->autograph = options_.autograph;
  return root;
}

std::shared_ptr<const Graph> FunctionTracer::trace_graph(const Signature& sig, std::span<const ArgView> args,
                                                        const std::shared_ptr<TraceRoot>& root) {
  TraceFrame frame(nullptr, root, info_.name, {});
  {
    FrameScope scope(&frame);
    // One graph parameter per tensor, in order; a container's elements are named 'ws[0]', 'ws[1]'...
    std::vector<Tensor> placeholders;
    auto type = [](const ArgSig& t) { return t.rank_unknown ? TensorType::unknown_rank(t.dtype) : TensorType{t.dtype, t.shape}; };
    for (size_t i = 0; i < sig.args.size(); ++i) {
      const ArgSig& a = sig.args[i];
      const std::string name = a.name.empty() ? fmt::format("arg{}", i) : a.name;
      if (a.kind == ArgKind::Tensor) placeholders.push_back(frame.add_param(type(a), name));
      else if (a.kind == ArgKind::TensorList)
        for (size_t k = 0; k < a.elems.size(); ++k)
          placeholders.push_back(frame.add_param(type(a.elems[k]), fmt::format("{}[{}]", name, k)));
    }
    std::vector<Tensor> outs = body_(args, placeholders);
    if (outs.size() != num_outputs_) throw InternalError("tracer returned the wrong number of outputs");
    for (size_t i = 0; i < outs.size(); ++i) {
      const Tensor& t = outs[i];
      if (!t.has_value()) {
        const std::string why = detail::impl_of(t) && detail::impl_of(t)->note ? ": " + *detail::impl_of(t)->note : "";
        throw ConversionError(fmt::format("Function '{}' returns a tensor with no value (output {}){}", info_.name, i, why));
      }
      frame.graph.results.push_back(frame.value_of(t, OpKind::Identity, {}));
    }
  }
  frame.close();
  auto traced = std::make_shared<const Graph>(std::move(frame.graph));
  verify_graph(*traced);
  return traced;
}

std::shared_ptr<ConcreteCore> FunctionTracer::trace(const Signature& sig, const KeyBuf& sig_key,
                                                    std::span<const ArgView> args, const std::string& reason) {
  const auto t0 = std::chrono::steady_clock::now();
  const ProfileScope profile("trace", [&] { return fmt::format("trace {}({})", info_.name, sig.params_str()); });
  const ActiveTraceScope active(this, sig_key.to_vector());
  std::shared_ptr<TraceRoot> root = new_root(/*singleton_check=*/false);
  std::shared_ptr<const Graph> traced = trace_graph(sig, args, root);
  if (root->variables_created > 0) {
    // TensorFlow traces a Function that created Variables again, without letting it create any: the
    // second graph is the one kept (it reads the Variables the first trace made).
    root = new_root(/*singleton_check=*/true);
    traced = trace_graph(sig, args, root);
  }

  std::string prefix;
  if (!dump_dir().empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump_dir(), ec);
    prefix = fmt::format("{}/{}.{:08x}", dump_dir(), sanitize(info_.name), static_cast<uint32_t>(sig_key.hash()));
  }
  auto optimized = std::make_shared<const Graph>(optimize(*traced, prefix));
  if (!prefix.empty()) {
    std::ofstream(prefix + ".graph.txt") << "// " << info_.name << "(" << sig.params_str() << ")\n"
                                          << graph_to_text(*optimized);
    std::ofstream(prefix + ".dot") << graph_to_dot(*optimized);
  }
  stats_->traces.fetch_add(1);
  if (!options_.jit_compile.has_value() && !compiler_backend()) warn_no_jit_once(info_.name);
  auto fn = std::make_shared<ConcreteCore>(info_.name, sig, traced, optimized, options_.jit_compile, stats_, prefix,
                                           options_.tiered);
  if (log_enabled(LogTopic::Retrace)) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    log_line(fmt::format("agc: retrace: Function '{}' traced {}({}) (trace #{}, {:.2f} ms): {}", info_.name,
                         info_.name, sig.params_str(), stats_->traces.load(), ms, reason));
  }
  if (log_enabled(LogTopic::Trace))
    log_line(fmt::format("agc: trace: Function '{}': {} nodes traced, {} after optimization, {} plain-loop iterations "
                         "unrolled",
                         info_.name, traced->nodes.size(), optimized->nodes.size(), root->unrolled_iterations));
  return fn;
}

}  // namespace ag::detail
