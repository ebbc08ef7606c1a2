// apply_op, the entry point of every op: eager when all inputs are concrete, recorded into the
// graph being traced when one is symbolic.
#include "../trace/frame.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"

namespace ag::detail {

std::atomic<EagerOpHook> g_eager_op_hook{nullptr};

namespace {

Tensor run_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  bool symbolic = false;
  for (const Tensor& t : inputs) {
    check_readable(t, op, loc);
    symbolic |= detail::impl_of(t)->kind == ImplKind::Symbolic;
  }
  if (symbolic) return trace_op(op, inputs, attrs, loc);
  if (EagerOpHook hook = g_eager_op_hook.load(std::memory_order_relaxed)) [[unlikely]]
    return hook(op, inputs, attrs, loc);
  return eval_op(op, inputs, attrs, loc);
}

}  // namespace

Tensor apply_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  if (!tapes_alive()) [[likely]]
    return run_op(op, inputs, attrs, loc);
  if (t_caller_loc.known()) loc = t_caller_loc;  // library code on the user's behalf (a gradient rule)
  Tensor out = run_op(op, inputs, attrs, loc);
  // A TensorArray written in place comes back as its input handle: give it its own identity.
  if (out.dtype() == DType::List && !out.is_symbolic())
    for (const Tensor& in : inputs)
      if (detail::impl_of(in) == detail::impl_of(out)) out = tape_alias(out);
  tape_record(op, inputs, attrs, loc, {&out, 1});
  return out;
}

}  // namespace ag::detail
