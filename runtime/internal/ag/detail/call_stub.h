// A compiled concrete function's cached-call stub: one function that takes a call's argument
// views and result slots straight to the machine code, with the argument and result counts
// known when it was compiled (the JIT's CompiledExecutable::run_fixed). ConcreteCore::run calls
// it in place of the virtual Executable::run_tensor_args, whose generic set-up (counts, loops,
// a dispatch on them) was a third of a cached call's instructions (docs/performance.md,
// "W4: the cached-call path"). Internal: the runtime finds it with a dynamic_cast once, when the
// executable is published.
#pragma once

#include <atomic>

#include "ag/detail/arg_view.h"
#include "ag/tensor.h"

namespace ag::detail {

class CallStub {
 public:
  // Runs a call whose every argument is one Tensor of the compiled signature (the caller
  // checked the key) and whose `outputs` are the compiled results' slots. `held`, when not null,
  // is the caller's hazard slot (hazard_slots.h), which keeps this code alive: the stub clears it
  // (release) once it is done with the code, also when it throws, so that the cached call
  // reaches the stub by a tail call, with no frame of its own left to return through.
  using Fn = void (*)(const CallStub& self, const ArgView* args, Tensor* outputs, std::atomic<const void*>* held);
  Fn stub_fn() const { return fn_; }

 protected:
  CallStub() = default;
  CallStub(const CallStub&) = default;
  CallStub& operator=(const CallStub&) = default;
  ~CallStub() = default;
  Fn fn_ = nullptr;  // null: this executable has no stub (its calls take run_tensor_args)
};

// Clears a hazard slot handed over with a call (release order: the callee's reads of the code
// happen before a writer that sees it cleared frees it) when the scope ends, thrown through or
// not; a null slot is left alone. The stubs' and FunctionCore::run_held's way to honour `held`.
struct ReleaseHeldSlot {
  std::atomic<const void*>* held;
  ~ReleaseHeldSlot() {
    if (held) held->store(nullptr, std::memory_order_release);
  }
};

}  // namespace ag::detail
