// The runtime side of one call of compiled code: output tensors, TensorArray/variable slots,
// buffers the code owns, and the error it raised. Lives on the caller's stack. No LLVM.
#pragma once

#include <exception>
#include <span>
#include <vector>

#include "abi.h"
#include "ag/detail/tensor_impl.h"
#include "ag/tensor.h"
#include "plan.h"

namespace ag::jit {

struct CallState {
  const Program* program = nullptr;
  std::span<Tensor> outputs;
  std::vector<Tensor> slots;                 // program->num_slots entries
  std::vector<detail::Storage*> owned;       // agc_rt_alloc'd buffers not freed yet
  std::exception_ptr error;

  // Releases what an error path left behind.
  void release_owned() {
    for (detail::Storage* s : owned) s->release();
    owned.clear();
  }
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

// Formats the error of a FailKind raised by node `node` (an ag::Error subclass).
[[noreturn]] void throw_failure(const NodeInfo& node, FailKind kind, int64_t a, int64_t b);

}  // namespace ag::jit
