// The runtime side of one call of compiled code: output tensors, TensorArray/variable slots,
// buffers the code owns, and the error it raised. Lives on the caller's stack. No LLVM.
#pragma once

#include <exception>
#include <memory>
#include <span>
#include <vector>

#include "abi.h"
#include "ag/detail/tensor_impl.h"
#include "ag/tensor.h"
#include "plan.h"

namespace ag::jit {

// The slots and owned buffers live in a block made on first use: most calls (every cached
// call of a program without slots or heap temporaries) need neither, and then the state is four
// words to set up and two to check when it goes (the cached-call path, docs/performance.md).
struct CallState {
  CallState() = default;
  CallState(const CallState&) = delete;
  CallState& operator=(const CallState&) = delete;
  ~CallState() {
    if (extras_) [[unlikely]]
      delete extras_;
  }

  const Program* program = nullptr;
  std::span<Tensor> outputs;
  std::exception_ptr error;

  // program->num_slots entries (made, and sized, before the code runs when it has slots).
  std::vector<Tensor>& slots() { return extras().slots; }
  // agc_rt_alloc'd buffers not freed yet; making the block may throw (callers are guarded).
  std::vector<detail::Storage*>& owned() { return extras().owned; }
  // The same, or null when the call has allocated none: never allocates (agc_rt_free).
  std::vector<detail::Storage*>* owned_if_any() { return extras_ ? &extras_->owned : nullptr; }
  bool owns_buffers() const { return extras_ && !extras_->owned.empty(); }
  // The owned buffer whose data is `data`, no longer owned by the call (null if none is).
  detail::Storage* take_owned(const void* data) {
    if (!extras_) return nullptr;
    std::vector<detail::Storage*>& owned = extras_->owned;
    for (size_t i = owned.size(); i-- > 0;)
      if (owned[i]->data == data) {
        detail::Storage* s = owned[i];
        owned[i] = owned.back();
        owned.pop_back();
        return s;
      }
    return nullptr;
  }
  // Releases what an error path left behind.
  void release_owned() {
    if (!extras_) return;
    for (detail::Storage* s : extras_->owned) s->release();
    extras_->owned.clear();
  }

 private:
  struct Extras {
    std::vector<Tensor> slots;
    std::vector<detail::Storage*> owned;
  };
  Extras& extras() {
    if (!extras_) extras_ = new Extras;
    return *extras_;
  }
  Extras* extras_ = nullptr;  // owned; a plain pointer, so that a call without one checks it once
};

// Runs a runtime helper's `body(state)`: an exception becomes the call's recorded error and a
// return of 1, as JIT code expects (no exception may escape into it); else 0.
template <class F>
int32_t guarded(JitCallCtx* ctx, F&& body) {
  try {
    body(*ctx->state);
    return 0;
  } catch (...) {
    ctx->state->error = std::current_exception();
    return 1;
  }
}

// A tensor viewing a JIT buffer of static type `t` (no storage, so never freed here): helpers
// read JIT values through it without copying them (rt_state_helpers.cpp).
Tensor view_of(const JitArg& a, const TensorType& t);

// Formats the error of a FailKind raised by node `node` (an ag::Error subclass).
[[noreturn]] void throw_failure(const NodeInfo& node, FailKind kind, int64_t a, int64_t b);

// A buffer of `bytes` the call owns (freed with agc_rt_free, or when the call ends), or null when
// it cannot be had (rt_helpers.cpp).
void* try_allocate_owned(CallState& st, int64_t bytes);

}  // namespace ag::jit
