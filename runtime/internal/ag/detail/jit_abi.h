// The entry point of compiled code (the JIT's and code compiled ahead of time): its argument
// descriptors and per-call context. Here, not in the JIT, because the runtime's cached call runs
// code that needs no CallState itself (call_stub.h, CallStub::try_run_direct); the helpers' side
// of the convention is jit/src/abi.h. No LLVM.
#pragma once

#include <cstdint>

namespace ag::jit {

inline constexpr int kMaxRank = 8;

// One per graph parameter: the tensor's buffer and its dims (TensorImpl::shape's inline array).
struct JitArg {
  void* data;
  const int64_t* dims;
};

struct CallState;  // runtime side of a call: outputs, slots, owned buffers, the pending error

// The context JIT code receives. Field order is read by the emitter (CtxField): keep in sync.
struct JitCallCtx {
  void* const* out_data;      // per result: its preallocated buffer (static shape) or null
  int64_t* out_dims;          // per result: kMaxRank dims the JIT code writes before returning
  const void* const* consts;  // per global node id: a Const node's buffer (null for others)
  CallState* state;           // only runtime helpers that take the context read it (rt_helpers.def)
};

// The entry point of a compiled concrete function: 0 = success, 1 = an error is pending in ctx.
using EntryFn = int32_t (*)(const JitArg* args, JitCallCtx* ctx);

}  // namespace ag::jit
