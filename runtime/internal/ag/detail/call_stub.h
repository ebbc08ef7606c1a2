// A compiled concrete function's cached-call stub: one function that takes a call's tensors and
// result slots straight to the machine code, with the argument and result counts
// known when it was compiled (the JIT's CompiledExecutable::run_fixed). ConcreteCore::run calls
// it in place of the virtual Executable::run_tensor_args, whose generic set-up (counts, loops,
// a dispatch on them) was a third of a cached call's instructions (docs/performance.md,
// "W4: the cached-call path"). Internal: the runtime finds it with a dynamic_cast once, when the
// executable is published.
#pragma once

#include <span>

#include "ag/detail/arg_view.h"
#include "ag/detail/jit_abi.h"
#include "ag/detail/parked_tensor.h"
#include "ag/tensor.h"

namespace ag::detail {

// The most arguments a stub takes (CompiledExecutable makes stubs for 1 to 3 tensors).
inline constexpr size_t kMaxStubArgs = 3;

class CallStub {
 public:
  // Runs a call whose arguments are the Tensors `args[0..n)` of the compiled signature (the
  // caller checked the key; Function::operator() passes its parameters' addresses, with no
  // ArgView built) and whose `outputs` are the compiled results' slots (empty). The caller
  // keeps the code alive (its hazard slot, or its reference to the concrete function).
  using Fn = void (*)(const CallStub& self, const Tensor* const* args, Tensor* outputs);
  Fn stub_fn() const { return fn_; }

  // The direct call, made by the cached call itself (FunctionCore::call_tensors) with no stub,
  // CallState or frame of its own in between: for code of one result of static shape that
  // calls no runtime helper taking the call's context (so that it can neither fail nor need
  // slots, owned buffers or the outputs), when the thread's parked tensor is that result's
  // type. Runs the call on the arguments `in` (see jit_args) into the empty slot `*out` and
  // returns true; false: nothing done, the stub runs it.
  [[gnu::always_inline]] bool try_run_direct(const jit::JitArg* in, Tensor* out) const {
    if (!direct_entry_) return false;
    TensorImpl* result = unpark(direct_dtype_, direct_shape_);
    if (!result) [[unlikely]]
      return false;
    void* out_data[1] = {result->data};
    int64_t out_dims[jit::kMaxRank];
    std::construct_at(out, adopt(result));
    jit::JitCallCtx ctx{out_data, out_dims, direct_consts_, nullptr};
    if (enter(direct_entry_, in, &ctx) != 0) [[unlikely]]
      direct_call_failed(*out);
    return true;
  }

 protected:
  CallStub() = default;
  CallStub(const CallStub&) = default;
  CallStub& operator=(const CallStub&) = default;
  ~CallStub() = default;
  // Makes the direct call possible (see try_run_direct; the caller checked the code's helpers).
  void enable_direct_call(jit::EntryFn entry, const void* const* consts, DType dtype, const Shape& shape) {
    direct_entry_ = entry;
    direct_consts_ = consts;
    direct_dtype_ = dtype;
    direct_shape_ = shape;
  }
  void disable_direct_call() { direct_entry_ = nullptr; }

  Fn fn_ = nullptr;  // null: this executable has no stub (its calls take run_tensor_args)

  // Calls compiled code. UBSan's -fsanitize=function checks a signature word in front of an
  // indirect callee, which JIT code does not have: that check is off for this one call.
#if defined(__clang__)
  __attribute__((no_sanitize("function"), always_inline))
#else
  __attribute__((always_inline))
#endif
  static int32_t enter(jit::EntryFn entry, const jit::JitArg* args, jit::JitCallCtx* ctx) {
    return entry(args, ctx);
  }

 private:
  // Code without a context helper reported an error it has no way to raise: drops the result
  // and throws InternalError.
  [[noreturn, gnu::noinline]] static void direct_call_failed(Tensor& out);

  jit::EntryFn direct_entry_ = nullptr;  // null: no direct call
  const void* const* direct_consts_ = nullptr;
  DType direct_dtype_{};
  Shape direct_shape_;
};

// The entry point's arguments for the tensors `args[0..N)`. The cached call gathers them as soon
// as the inline cache's check has read the tensors, before its counters and the result's
// allocation: the loads that lead to the first value the code reads then overlap the rest of
// the path instead of following it (W2: a loop that starts on its argument's value).
template <size_t N>
[[gnu::always_inline]] inline void jit_args(const Tensor* const* args, jit::JitArg (&in)[N]) {
  for (size_t i = 0; i < N; ++i) {
    const TensorImpl* t = impl_of(*args[i]);
    in[i] = {t->data, t->shape.data()};
  }
}

// Runs `s` for a call given as ArgViews, each one Tensor (as many as the stub takes).
inline void call_stub(const CallStub& s, std::span<const ArgView> args, Tensor* outputs) {
  const Tensor* tensors[kMaxStubArgs] = {};
  for (size_t i = 0; i < args.size() && i < kMaxStubArgs; ++i) tensors[i] = &args[i].tensor();
  s.stub_fn()(s, tensors, outputs);
}

}  // namespace ag::detail
