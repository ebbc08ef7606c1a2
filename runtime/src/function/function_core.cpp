// The Function's calls: lock-free cached calls (the inline cache), one trace per signature under
// concurrency, generalized signatures, retrace diagnostics. The table of concrete functions and
// its eviction: function_table.cpp.
#include "function_core.h"

#include "ag/detail/fork_safety.h"

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "ag/detail/function_observer.h"
#include "background_compiler.h"
#include "../trace/frame.h"
#include "ag/backend.h"
#include "ag/detail/log.h"
#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "ag/graph/printer.h"
#include "ag/graph/verifier.h"

namespace ag::detail {
namespace {

// The signatures being traced on this thread, innermost last: a Function may call itself while
// it traces (recursion that ends at trace time, each level a new signature), but not with a
// signature it is tracing (that recursion would not end).
struct ActiveTrace {
  const FunctionCore* function;
  std::vector<uint64_t> signature;  // its key words
};
thread_local std::vector<ActiveTrace> t_active_traces;

class ActiveTraceScope {
 public:
  ActiveTraceScope(const FunctionCore* f, std::vector<uint64_t> signature) {
    t_active_traces.push_back({f, std::move(signature)});
  }
  ~ActiveTraceScope() { t_active_traces.pop_back(); }
  ActiveTraceScope(const ActiveTraceScope&) = delete;
  ActiveTraceScope& operator=(const ActiveTraceScope&) = delete;
};

bool tracing_signature(const FunctionCore* f, const std::vector<uint64_t>& signature) {
  return std::any_of(t_active_traces.begin(), t_active_traces.end(),
                     [&](const ActiveTrace& t) { return t.function == f && t.signature == signature; });
}

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

// See function_core.h.
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

FunctionCore::FunctionCore(FunctionOptions options, FunctionInfo info, std::vector<ParamLayout> params,
                           size_t num_outputs, Tracer tracer)
    : options_(std::move(options)),
      info_(std::move(info)),
      name_ptr_(std::make_shared<const std::string>(info_.name)),
      params_(std::move(params)),
      num_outputs_(num_outputs),
      tracer_(std::move(tracer)),
      stats_(std::make_shared<StatCounters>()) {
  rules_.function_name = &info_.name;
  rules_.param_names = &info_.params;
  rules_.params = &params_;
  rules_.arg_params = &info_.arg_params;
  if (!options_.input_signature.empty()) rules_.input_signature = &options_.input_signature;
  if (options_.max_cached == 0) throw ValueError("FunctionOptions::max_cached must be at least 1");
  tensor_args_only_ = info_.arg_params.empty() && std::all_of(params_.begin(), params_.end(), [](const ParamLayout& p) {
    return p.kind == ParamLayout::Kind::Tensor;
  });
  if (FunctionObserver* o = function_observer()) o->function_created(*this);
  if (options_.jit_compile.value_or(true)) warm_up_compiler_once();
}

FunctionCore::~FunctionCore() {
  if (FunctionObserver* o = function_observer()) o->function_destroyed(*this);
  // A tiered Function's compiles must not outlive it into process exit: LLVM's statics created
  // lazily by the first compile are destroyed before the exit handler that waits for a compile
  // (background_compiler.cpp) runs, so a compile still running then crashed (~5% of the runs
  // of jit_bench --first-call tanh_chain tiered, main returning during its first compile).
  // Nor may the JIT's warm-up, which the first Function started.
  if (options_.tiered) wait_for_background_compiles();
  else if (options_.jit_compile.value_or(true)) wait_for_warm_up();
}

void FunctionCore::call(std::span<const ArgView> args, std::span<Tensor> outputs) {
  if (is_tracing()) [[unlikely]] {
    call_while_tracing(args, outputs);
    return;
  }
  // The inline cache: the entry of this thread's previous lookup, checked without building a key.
  // Only this path is inlined here: the key, the table and tracing are call_by_key's (a frame of
  // their own, so a cached call does not set up the key's buffer).
  if (!rules_.input_signature) [[likely]] {
    hazard::SlotGuard guard;
    const SignatureCache::Entry* hit = cache_.find_inline(guard, [&](const uint64_t* w, size_t n) {
      return tensor_args_only_ ? tensor_args_have_key(args, w, n) : call_has_key(args, w, n);
    });
    if (hit) [[likely]] {
      run_inline_hit(guard, *hit, args, outputs);
      return;
    }
  }
  call_by_key(args, outputs);
}

void FunctionCore::run_inline_hit(const hazard::SlotGuard& guard, const SignatureCache::Entry& hit,
                                  std::span<const ArgView> args, std::span<Tensor> outputs) {
  note_hit();
  stats_->inline_hits.add_on_own_stripe(guard.index(), 1);  // the slot's index is the thread's stripe
  hit.fn->run(args, outputs);
}

void FunctionCore::call_by_key(std::span<const ArgView> args, std::span<Tensor> outputs) {
  KeyBuf key;
  build_key(args, rules_, key);
  if (rules_.input_signature) {
    // With an input_signature the inline entry is checked against the built key (building it
    // checks the arguments).
    hazard::SlotGuard guard;
    const SignatureCache::Entry* hit = cache_.find_inline(
        guard, [&](const uint64_t* w, size_t n) { return n == key.size() && std::equal(w, w + n, key.data()); });
    if (hit) {
      run_inline_hit(guard, *hit, args, outputs);
      return;
    }
  }
  std::shared_ptr<ConcreteCore> fn = cache_.find(key.data(), key.size(), key.hash());
  if (fn) [[likely]] {
    note_hit();
    stats_->memory_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    fn = lookup_or_trace(args, key, /*exact=*/false);
  }
  fn->run(args, outputs);
}

std::shared_ptr<ConcreteCore> FunctionCore::get_concrete(std::span<const ArgView> args) {
  KeyBuf key;
  build_key(args, rules_, key);
  if (auto fn = find_exact(key)) return fn;
  return lookup_or_trace(args, key, /*exact=*/true);
}

std::shared_ptr<ConcreteCore> FunctionCore::get_concrete_from_input_signature() {
  if (options_.input_signature.empty())
    throw ValueError(fmt::format("get_concrete_function() of Function '{}' without arguments needs an input_signature; "
                                 "pass a TensorSpec or an example value for each parameter",
                                 info_.name));
  // Each parameter takes its specs in order: one for a Tensor, N for a std::array<Tensor, N>.
  std::vector<ArgView> views(params_.size());
  size_t slot = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    switch (params_[i].kind) {
      case ParamLayout::Kind::Tensor:
        views[i].kind = ArgKind::TensorSpec;
        views[i].ptr = &options_.input_signature[slot++];
        break;
      case ParamLayout::Kind::TensorArray:
        views[i].kind = ArgKind::TensorSpecList;
        views[i].fixed_size = true;
        views[i].ptr = options_.input_signature.data() + slot;
        views[i].i = static_cast<int64_t>(params_[i].size);
        slot += params_[i].size;
        break;
      default:
        throw ValueError(fmt::format("get_concrete_function() of Function '{}' without arguments: the function has "
                                     "parameters that are not tensors; pass a value for each parameter",
                                     info_.name));
    }
  }
  return get_concrete(views);
}

void FunctionCore::call_while_tracing(std::span<const ArgView> args, std::span<Tensor> outputs) {
  std::shared_ptr<ConcreteCore> hold;
  inline_into_current_frame(get_concrete(args)->bound_to(args, hold), args, outputs);
}

void FunctionCore::throw_recursion(const Signature& sig) const {
  throw ConversionError(fmt::format(
      "Function '{}' calls itself while it is being traced with the signature it is tracing, {}({}): that "
      "recursion would not end at trace time. A recursive Function must call itself with a new signature at each "
      "level (a plain C++ argument that changes, as in TensorFlow's recursive tf.function), or write the "
      "recursion as a loop",
      info_.name, info_.name, sig.params_str()));
}

Signature FunctionCore::signature_to_trace(std::span<const ArgView> args, std::string& reason) {
  Signature sig = describe(args, rules_);
  std::vector<const Signature*> cached;
  for (const auto& e : cache_.entries())
    if (!e->alias) cached.push_back(&e->fn->signature());
  const Signature* near = nearest(cached, sig);
  reason = near ? describe_difference(*near, sig) : std::string("first trace");

  if (options_.reduce_retracing)
    if (const Signature* family = nearest_in_family(cached, sig)) sig = generalize(sig, *family);

  // Traces still running on other threads count: they will complete (or fail) on their own, and
  // counting only finished ones would let concurrent misses all pass the cap.
  if (options_.max_traces >= 0 && stats_->traces.load() + traces_in_flight_ >= options_.max_traces) {
    switch (options_.on_max_traces) {
      case TracePolicy::error:
        throw ValueError(fmt::format(
            "Function '{}' reached max_traces={} and would trace again for {}({}) ({}); raise max_traces, give an "
            "input_signature with unknown dims, or choose TracePolicy::generalize",
            info_.name, options_.max_traces, info_.name, sig.params_str(), reason));
      case TracePolicy::warn:
        if (!max_traces_warned_) {
          max_traces_warned_ = true;
          log_line(fmt::format("agc: warning: Function '{}' traced more than max_traces={} times (latest: {})",
                               info_.name, options_.max_traces, reason));
        }
        break;
      case TracePolicy::generalize: sig = generalize_all(sig); break;
    }
  }
  return sig;
}

std::shared_ptr<ConcreteCore> FunctionCore::lookup_or_trace(std::span<const ArgView> args, const KeyBuf& key,
                                                            bool exact) {
  const ForkGatePass pass;  // fork() waits for a trace in progress (its pending entry, mu_)
  std::vector<uint64_t> key_words = key.to_vector();
  std::unique_lock lock(mu_);
  for (;;) {
    if (!exact)
      if (auto fn = cache_.find(key.data(), key.size(), key.hash())) {  // traced meanwhile by another thread
        stats_->memory_hits.fetch_add(1, std::memory_order_relaxed);
        return fn;
      }
    auto it = pending_.find(key_words);
    if (it == pending_.end()) break;
    auto pending = it->second;
    if (pending->owner == std::this_thread::get_id()) {  // this thread is tracing it: waiting would never end
      lock.unlock();
      throw_recursion(describe(args, rules_));
    }
    pending_done_.wait(lock, [&] { return pending->done; });
  }
  if (exact) {
    lock.unlock();
    if (auto fn = find_exact(key)) return fn;
    lock.lock();
  }
  // A more general concrete function may fit (input_signature, reduce_retracing, generalize).
  if (auto fn = exact ? nullptr : find_compatible(args)) {
    insert_alias(key, fn);
    stats_->memory_hits.fetch_add(1, std::memory_order_relaxed);
    note_hit();
    return fn;
  }
  std::string reason;
  Signature sig = signature_to_trace(args, reason);
  KeyBuf sig_key;
  key_of(sig, rules_, sig_key);
  if (auto fn = exact ? nullptr : cache_.find(sig_key.data(), sig_key.size(), sig_key.hash())) {
    insert_alias(key, fn);
    return fn;
  }
  if (tracing_signature(this, sig_key.to_vector())) {
    lock.unlock();
    throw_recursion(sig);
  }
  auto pending = std::make_shared<Pending>();
  pending->owner = std::this_thread::get_id();
  pending_.emplace(key_words, pending);
  ++traces_in_flight_;
  lock.unlock();

  std::shared_ptr<ConcreteCore> fn;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    fn = trace(sig, args, reason);
  } catch (...) {
    lock.lock();
    --traces_in_flight_;
    pending_.erase(key_words);
    pending->done = true;
    pending_done_.notify_all();
    throw;
  }
  lock.lock();
  --traces_in_flight_;
  // A new concrete function may be a better match for calls that aliases resolved before.
  const std::vector<uint64_t> sig_words = sig_key.to_vector();
  cache_.remove_if([&](const SignatureCache::Entry& e) { return e.alias || e.key == sig_words; });
  insert(sig_key, fn, false);
  if (sig_words != key_words && !exact) insert_alias(key, fn);
  evict_over_capacity();
  pending_.erase(key_words);
  pending->done = true;
  pending_done_.notify_all();
  // A trace made inside another Function's trace (a nested or recursive call) is not a call of
  // this Function's own: TensorFlow's retracing warning does not count it either.
  if (!is_tracing()) note_trace(reason);
  record({TraceEvent::Kind::Trace, stats_->traces.load(), fn->signature_str(), reason,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), fn});
  return fn;
}

std::shared_ptr<const Graph> FunctionCore::trace_graph(const Signature& sig, std::span<const ArgView> args,
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
    std::vector<Tensor> outs = tracer_(args, placeholders);
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

std::shared_ptr<ConcreteCore> FunctionCore::trace(const Signature& sig, std::span<const ArgView> args,
                                                  const std::string& reason) {
  const auto t0 = std::chrono::steady_clock::now();
  auto new_root = [&](bool first_trace, bool singleton_check) {
    auto root = std::make_shared<TraceRoot>();
    root->function = this;
    root->function_name = name_ptr_;
    root->first_trace = first_trace;
    root->singleton_check = singleton_check;
    root->autograph = options_.autograph;
    return root;
  };
  KeyBuf sig_key;
  key_of(sig, rules_, sig_key);
  const ActiveTraceScope active(this, sig_key.to_vector());
  std::shared_ptr<TraceRoot> root = new_root(traces_started_.fetch_add(1) == 0, false);
  std::shared_ptr<const Graph> traced = trace_graph(sig, args, root);
  if (root->variables_created > 0) {
    // TensorFlow traces a Function that created Variables again, without letting it create any: the
    // second graph is the one kept (it reads the Variables the first trace made).
    root = new_root(/*first_trace=*/false, /*singleton_check=*/true);
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

void FunctionCore::note_trace(const std::string& reason) {
  uint32_t h = ((history_.load(std::memory_order_relaxed) << 1) | 1) & 0x3ff;
  history_.store(h, std::memory_order_relaxed);
  ++traces_noted_;
  const int traced = std::popcount(h);
  if (traced < 5 || warnings_ >= 2) return;
  // The calls so far: the traced ones plus the cache hits the call path already counts (so the
  // hot path does no extra work for this message).
  const int64_t calls = traces_noted_ + stats_->memory_hits.load(std::memory_order_relaxed) +
                        stats_->inline_hits.load(std::memory_order_relaxed);
  const int64_t window = std::max<int64_t>(traced, std::min<int64_t>(10, calls));
  ++warnings_;
  log_line(fmt::format(
      "agc: WARNING: {} of the last {} calls of Function '{}' traced a new graph (the latest because {}). Tracing is "
      "expensive. Common causes: (1) tensors of many different shapes: give FunctionOptions::input_signature unknown "
      "dims (-1) or set reduce_retracing; (2) plain C++ numbers that change between calls: pass ag::Tensor instead; "
      "(3) calling ag::function repeatedly in a loop: create the Function once.",
      traced, window, info_.name, reason));
}

void FunctionCore::record(TraceEvent e) {
  if (history_events_.size() >= kMaxHistory) history_events_.pop_front();
  history_events_.push_back(std::move(e));
}

std::vector<TraceEvent> FunctionCore::history() const {
  std::lock_guard lock(mu_);
  return {history_events_.begin(), history_events_.end()};
}

FunctionStats FunctionCore::stats() const {
  FunctionStats s;
  s.traces = stats_->traces.load();
  s.compiles = stats_->compiles.load();
  s.inline_hits = stats_->inline_hits.load();
  s.memory_hits = stats_->memory_hits.load() + s.inline_hits;
  s.disk_hits = stats_->disk_hits.load();
  s.interpreted_calls = stats_->interpreted_calls.load();
  s.evictions = stats_->evictions.load();
  std::lock_guard lock(mu_);
  for (const auto& e : cache_.entries()) s.aliases += e->alias;
  return s;
}

}  // namespace ag::detail
