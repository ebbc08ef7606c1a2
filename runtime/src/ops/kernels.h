// Eager kernels, one family per file. Each computes an op on concrete inputs into a result of
// the already inferred type (`out`: dtype and concrete shape).
#pragma once

#include <span>

#include "ag/detail/kernel_set.h"
#include "ag/detail/ops_internal.h"

namespace ag::detail {

// Built once per instruction-set level (isa/): these call the level chosen for this process.
inline Tensor elementwise_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out,
                                 SourceLoc loc) {
  return kernels().elementwise(op, in, attrs, out, loc);
}
inline Tensor reduce_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out,
                            SourceLoc loc) {
  return kernels().reduce(op, in, attrs, out, loc);
}
inline Tensor matmul_kernel(std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc) {
  return kernels().matmul(in, attrs, out, loc);
}

// Cumsum / Cumprod (scan.cpp).
Tensor scan_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
// The Window and Index families (runtime_kernels.cpp), which compiled code calls too, each on
// buffers of the result's shape (window/window_kernel.cpp, index/index_kernels.cpp).
void compute_window(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out);
void compute_index_op(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out, SourceLoc loc);
Tensor runtime_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
Tensor layout_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
Tensor source_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
// CheckNumerics (check_numerics.cpp): its input, after raising on a NaN or Inf.
Tensor check_numerics_kernel(std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc);
Tensor list_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
// Assert: throws InvalidArgumentError when an element of in[0] is false (in[1..]: data shown).
void check_assertion(std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc);
Tensor stateful_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
// RandomUniform / RandomNormal: draws from attrs.variable's generator state, advancing it.
Tensor random_kernel(OpKind op, const Attrs& attrs);
// Takes the words a draw of `shape` needs from a Generator's state ({seed, counter}) and
// advances its counter, atomically: returns {seed, first word}. Also compiled code's path.
std::pair<uint64_t, uint64_t> take_random_words(VariableState& state, OpKind op, const Shape& shape);
// Their static type (no inputs; errors name the op, the dtype or the bounds).
TensorType random_type(OpKind op, size_t num_inputs, const Attrs& attrs, SourceLoc loc);

}  // namespace ag::detail

namespace ag::detail {
// A contiguous copy of x with its dims permuted (out dim i = x dim perm[i]).
Tensor transpose_copy(const Tensor& x, const Shape& perm);
}  // namespace ag::detail
