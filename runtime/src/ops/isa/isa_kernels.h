// The eager kernels built once per instruction-set level. Each build of these files gets its
// own namespace (AG_KERNEL_NS, set by runtime/CMakeLists.txt with -march), and its objects
// are linked into one object whose only global symbol is its KernelSet table, so code built
// for one level can never be picked by the linker for another.
#pragma once

#include "../kernels.h"

#ifndef AG_KERNEL_NS
#error "isa/ files are compiled once per ISA level with AG_KERNEL_NS set (see runtime/CMakeLists.txt)"
#endif

namespace ag::detail::AG_KERNEL_NS {

// A new tensor of type `out` = op(in), on the pool and around the cache when large
// (elementwise_parallel.cpp).
Tensor elementwise_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
// The serial kernel (elementwise.cpp): `out`, allocated with `type`'s shape, = op(in) with
// NumPy broadcasting.
void elementwise_into(OpKind op, std::span<const Tensor> in, const TensorType& type, Tensor& out, SourceLoc loc);
Tensor reduce_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
Tensor matmul_kernel(std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
// KernelSet::random_fill (kernel_set.h).
void random_fill(DType dtype, void* out, int64_t n, bool normal, uint64_t seed, uint64_t counter, double a, double b);
// FusedConv2D's bias and relu in place (KernelSet::conv_epilogue_f32).
template <class T>
void conv_epilogue(T* y, const T* bias, bool relu, int64_t rows, int64_t oc);
// Row-major C[m, n] = op(A) op(B) with Eigen's blocked product (KernelSet::gemm_f32).
template <class T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, int64_t transposes);
// The GEMM with a packed B (KernelSet::gemm_pack_b_f32 and its neighbours; matmul_packed.cpp).
template <class T>
int64_t gemm_packed_b_bytes(int64_t m, int64_t k, int64_t n);
template <class T>
void gemm_pack_b(const T* b, void* packed, int64_t m, int64_t k, int64_t n, int64_t transposes);
template <class T>
void gemm_packed_b(const T* a, const T* b, const void* packed, T* c, int64_t m, int64_t k, int64_t n, int64_t transposes);

}  // namespace ag::detail::AG_KERNEL_NS
