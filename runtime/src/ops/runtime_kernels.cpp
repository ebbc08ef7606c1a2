// The eager kernel of the Window and Index families, which compiled code calls too.
#include "ag/detail/runtime_kernels.h"

#include "kernels.h"

namespace ag::detail {

void compute_into(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out, SourceLoc loc) {
  if (op_class(op) == OpClass::Window) return compute_window(op, in, attrs, out);
  if (op_class(op) == OpClass::Index) return compute_index_op(op, in, attrs, out, loc);
  throw InternalError(std::string("compute_into: ") + std::string(op_name(op)));
}

Tensor runtime_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc) {
  Tensor result = make_tensor(out.dtype, out.shape);
  // An index op checks its indices even when its result is empty (a segment sum into no
  // segments, rows of no elements), as compiled code and TensorFlow do.
  if (out.shape.num_elements() > 0 || op_class(op) == OpClass::Index) compute_into(op, in, attrs, impl_of(result)->data, loc);
  return result;
}

}  // namespace ag::detail
