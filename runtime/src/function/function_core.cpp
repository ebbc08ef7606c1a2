// The Function's calls: lock-free cached calls (the inline cache), one trace per signature under
// concurrency, generalized signatures, max_traces. The table of concrete functions and its
// eviction: function_table.cpp; the tracing itself: function_tracer.cpp.
#include "function_core.h"

#include "ag/detail/fork_safety.h"

#include <fmt/format.h>

#include <chrono>

#include "../trace/frame.h"
#include "ag/detail/function_observer.h"
#include "ag/detail/log.h"
#include "ag/detail/ops_internal.h"
#include "background_compiler.h"

namespace ag::detail {

FunctionCore::FunctionCore(FunctionOptions options, FunctionInfo info, std::vector<ParamLayout> params,
                           size_t num_outputs, Tracer tracer)
    : options_(std::move(options)),
      info_(std::move(info)),
      params_(std::move(params)),
      stats_(std::make_shared<StatCounters>()),
      tracer_(info_, options_, num_outputs, std::move(tracer), stats_),
      history_(info_.name) {
  rules_.function_name = &info_.name;
  rules_.param_names = &info_.params;
  rules_.params = &params_;
  rules_.arg_params = &info_.arg_params;
  if (!options_.input_signature.empty()) rules_.input_signature = &options_.input_signature;
  if (options_.max_cached == 0) throw ValueError("FunctionOptions::max_cached must be at least 1");
  tensor_args_only_ = info_.arg_params.empty() && std::all_of(params_.begin(), params_.end(), [](const ParamLayout& p) {
    return p.kind == ParamLayout::Kind::Tensor;
  });
  inline_tensor_calls_ = tensor_args_only_ && !rules_.input_signature;
  hazard::decide_mode_in_background();  // before the first cached call needs it
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

// The cached call. Every call made here is a tail call, so the path a loop of cached calls
// takes saves no registers and leaves no frame to return through (docs/performance.md, "W4: the
// cached-call path"): tracing, an input_signature, arguments that are not all tensors and a
// miss of the inline cache go to call_general / call_by_key, and run_held clears the hazard slot.
void FunctionCore::call(std::span<const ArgView> args, std::span<Tensor> outputs) {
  if (is_tracing()) [[unlikely]]
    return call_while_tracing(args, outputs);
  if (!inline_tensor_calls_) [[unlikely]]
    return call_general(args, outputs);
  hazard::SlotGuard guard;
  const SignatureCache::Entry* hit = inline_hit(guard, args.size(), [&](size_t i) -> const Tensor& { return args[i].tensor(); });
  if (!hit) [[unlikely]]
    return call_by_key(args, outputs);
  note_inline_hit(guard);
  return run_held(*hit->fn, args, outputs, guard.hand_over());
}

// Function::operator()'s path for N Tensor parameters: the call's tensors by address, checked
// against the inline entry's key unrolled, then the compiled code called directly when it can
// be (CallStub::try_run_direct), else its stub (call_stub.h). These are not tail calls (the
// tensors' array is this frame's), so the guard clears the hazard slot when they return.
// Anything else builds the ArgViews and takes call()'s path.
template <size_t N>
[[gnu::always_inline]] inline void FunctionCore::call_tensors(const Tensor* const* args, std::span<Tensor> outputs) {
  if (is_tracing() || !inline_tensor_calls_) [[unlikely]]
    return call_tensors_as_views(args, N, outputs);
  hazard::SlotGuard guard;
  const SignatureCache::Entry* hit = inline_hit(guard, N, [&](size_t i) -> const Tensor& { return *args[i]; });
  if (!hit) [[unlikely]]
    return call_tensors_as_views(args, N, outputs);
  jit::JitArg in[N];
  jit_args(args, in);
  if (const CallStub* s = hit->fn->direct_stub()) [[likely]] {
    if (s->try_run_direct(in, outputs.data())) [[likely]] {
      stats_->direct_calls.add_on_own_stripe(guard.index(), 1);
      return;  // the guard clears the slot
    }
    note_inline_hit(guard);
    return s->stub_fn()(*s, args, outputs.data());  // the guard clears the slot
  }
  note_inline_hit(guard);
  run_tensors(*hit->fn, args, N, outputs);
}

void CallStub::direct_call_failed(Tensor& out) {
  out = Tensor();
  throw InternalError("jit: compiled code that calls no runtime helper returned an error");
}

namespace {
// A call's N tensors as the ArgViews the general paths take.
struct TensorViews {
  ArgView views[kMaxTensorCallArgs];
  size_t n;
  TensorViews(const Tensor* const* args, size_t count) : n(count) {
    for (size_t i = 0; i < n; ++i) views[i].ptr = args[i];  // kind Tensor
  }
  std::span<const ArgView> span() const { return {views, n}; }
};
}  // namespace

void FunctionCore::call_tensors_as_views(const Tensor* const* args, size_t n, std::span<Tensor> outputs) {
  call(TensorViews(args, n).span(), outputs);
}

void FunctionCore::run_tensors(ConcreteCore& fn, const Tensor* const* args, size_t n, std::span<Tensor> outputs) {
  fn.run(TensorViews(args, n).span(), outputs);
}

template <class... T>
void call_tensor_function(FunctionCore& f, std::span<Tensor> outputs, const T*... args) {
  const Tensor* const tensors[] = {args...};  // in registers where only the direct call reads them
  f.call_tensors<sizeof...(T)>(tensors, outputs);
}
template void call_tensor_function<Tensor>(FunctionCore&, std::span<Tensor>, const Tensor*);
template void call_tensor_function<Tensor, Tensor>(FunctionCore&, std::span<Tensor>, const Tensor*, const Tensor*);
template void call_tensor_function<Tensor, Tensor, Tensor>(FunctionCore&, std::span<Tensor>, const Tensor*, const Tensor*,
                                                           const Tensor*);
static_assert(kMaxTensorCallArgs == kMaxStubArgs);

void FunctionCore::call_general(std::span<const ArgView> args, std::span<Tensor> outputs) {
  if (!rules_.input_signature) {
    hazard::SlotGuard guard;
    const SignatureCache::Entry* hit =
        cache_.find_inline(guard, [&](const uint64_t* w, size_t n) { return call_has_key(args, w, n); });
    if (hit) {
      run_inline_hit(guard, *hit, args, outputs);
      return;
    }
  }
  call_by_key(args, outputs);
}

void FunctionCore::run_held(ConcreteCore& fn, std::span<const ArgView> args, std::span<Tensor> outputs,
                            std::atomic<const void*>* held) {
  // Clears the slot when done with `fn` (release order: a writer that sees it cleared may free
  // it), returned or thrown through.
  struct Release {
    std::atomic<const void*>* held;
    ~Release() { held->store(nullptr, std::memory_order_release); }
  } release{held};
  fn.run(args, outputs);
}

template <class TensorAt>
[[gnu::always_inline]] inline const SignatureCache::Entry* FunctionCore::inline_hit(hazard::SlotGuard& guard, size_t n,
                                                                                   TensorAt&& tensor_at) {
  const SignatureCache::Entry* hit =
      cache_.find_inline(guard, [&](const uint64_t* w, size_t k) { return tensors_have_key(n, tensor_at, w, k); });
  if (!hit) [[unlikely]] {
    guard.dismiss();  // find_inline cleared the slot
    return nullptr;
  }
  history_.note_hit();
  return hit;
}

void FunctionCore::note_inline_hit(const hazard::SlotGuard& guard) {
  stats_->inline_hits.add_on_own_stripe(guard.index(), 1);  // the slot's index is the thread's stripe
}

void FunctionCore::run_inline_hit(const hazard::SlotGuard& guard, const SignatureCache::Entry& hit,
                                  std::span<const ArgView> args, std::span<Tensor> outputs) {
  history_.note_hit();
  note_inline_hit(guard);
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
    history_.note_hit();
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
      tracer_.throw_recursion(describe(args, rules_));
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
    history_.note_hit();
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
  if (tracer_.tracing_on_this_thread(sig_key.to_vector())) {
    lock.unlock();
    tracer_.throw_recursion(sig);
  }
  auto pending = std::make_shared<Pending>();
  pending->owner = std::this_thread::get_id();
  pending_.emplace(key_words, pending);
  ++traces_in_flight_;
  lock.unlock();

  std::shared_ptr<ConcreteCore> fn;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    fn = tracer_.trace(sig, sig_key, args, reason);
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
  publish(key, sig_key, exact, fn, reason,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  pending_.erase(key_words);
  pending->done = true;
  pending_done_.notify_all();
  return fn;
}

void FunctionCore::publish(const KeyBuf& key, const KeyBuf& sig_key, bool exact, const std::shared_ptr<ConcreteCore>& fn,
                           const std::string& reason, double ms) {
  // A new concrete function may be a better match for calls that aliases resolved before.
  const std::vector<uint64_t> sig_words = sig_key.to_vector();
  cache_.remove_if([&](const SignatureCache::Entry& e) { return e.alias || e.key == sig_words; });
  insert(sig_key, fn, false);
  if (sig_words != key.to_vector() && !exact) insert_alias(key, fn);
  evict_over_capacity();
  // A trace made inside another Function's trace (a nested or recursive call) is not a call of
  // this Function's own: TensorFlow's retracing warning does not count it either.
  if (!is_tracing()) history_.note_trace(reason, *stats_);
  history_.record({TraceEvent::Kind::Trace, stats_->traces.load(), fn->signature_str(), reason, ms, fn});
}

FunctionStats FunctionCore::stats() const {
  FunctionStats s;
  s.traces = stats_->traces.load();
  s.compiles = stats_->compiles.load();
  s.direct_calls = stats_->direct_calls.load();
  s.inline_hits = stats_->inline_hits.load() + s.direct_calls;
  s.memory_hits = stats_->memory_hits.load() + s.inline_hits;
  s.disk_hits = stats_->disk_hits.load();
  s.interpreted_calls = stats_->interpreted_calls.load();
  s.evictions = stats_->evictions.load();
  std::lock_guard lock(mu_);
  for (const auto& e : cache_.entries()) s.aliases += e->alias;
  return s;
}

}  // namespace ag::detail
