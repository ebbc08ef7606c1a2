// apply_op, the entry point of every op: eager when all inputs are concrete, recorded into the
// graph being traced when one is symbolic.
#include <vector>

#include "../trace/frame.h"
#include "ag/detail/check_numerics.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/profiler.h"
#include "ag/detail/tape.h"

namespace ag::detail {

std::atomic<EagerOpHook> g_eager_op_hook{nullptr};

namespace {

bool has_storage_dtype(std::span<const Tensor> inputs) {
  for (const Tensor& t : inputs)
    if (const TensorImpl* impl = detail::impl_of(t); impl && is_storage_dtype(impl->dtype)) return true;
  return false;
}

Tensor cast_to(const Tensor& x, DType dtype, SourceLoc loc) {
  Attrs a;
  a.dtype = dtype;
  return apply_op(OpKind::Cast, {x}, a, loc);
}

// `op` on storage dtypes (docs/eager.md, "Dtype rules"): its type rule on the dtypes the user
// has decides what is allowed and the result's dtype; the op runs on the inputs widened to
// their compute dtypes, and its result is rounded (16-bit floats) or wrapped (8-bit integers)
// back. As ops of their own, the casts are traced, taped and differentiated like any other.
Tensor apply_widened(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  std::vector<TensorType> types;
  for (const Tensor& t : inputs) {
    check_readable(t, op, loc);
    types.push_back(type_of(t));
  }
  const DType result = infer_type(op, types, attrs, loc).dtype;
  std::vector<Tensor> wide(inputs.begin(), inputs.end());
  for (Tensor& t : wide)
    if (is_storage_dtype(t.dtype())) t = cast_to(t, compute_dtype(t.dtype()), loc);
  Tensor out = apply_op(op, wide, attrs, loc);
  return out.dtype() == result ? out : cast_to(out, result, loc);
}

Tensor run_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  bool symbolic = false;
  for (const Tensor& t : inputs) {
    check_readable(t, op, loc);
    symbolic |= detail::impl_of(t)->kind == ImplKind::Symbolic;
  }
  if (symbolic) return trace_op(op, inputs, attrs, loc);
  const ProfileScope profile("op", [&] { return std::string(user_op_name(op)); }, loc);
  Tensor out;
  if (EagerOpHook hook = g_eager_op_hook.load(std::memory_order_relaxed)) [[unlikely]]
    out = hook(op, inputs, attrs, loc);
  else
    out = eval_op(op, inputs, attrs, loc);
  if (check_numerics_enabled()) [[unlikely]]
    check_result_numerics(op, out, loc);
  return out;
}

}  // namespace

Tensor apply_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  if (has_storage_dtype(inputs) && !runs_on_storage_dtypes(op)) [[unlikely]]
    return apply_widened(op, inputs, attrs, loc);
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
