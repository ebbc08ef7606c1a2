// Matrix multiplication with Eigen's GEMM; batched over broadcast leading dims. The same GEMM
// serves compiled code (the JIT binds this level's gemm for large or dynamic matmuls).
#include <Eigen/Core>

#include "../broadcast.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

template <class T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n) {
  Eigen::Map<const Mat<T>> A(a, m, k);
  Eigen::Map<const Mat<T>> B(b, k, n);
  Eigen::Map<Mat<T>> C(c, m, n);
  if (k == 0) C.setZero();
  else C.noalias() = A * B;
}
template void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t);
template void gemm(const double*, const double*, double*, int64_t, int64_t, int64_t);
template void gemm(const int32_t*, const int32_t*, int32_t*, int64_t, int64_t, int64_t);
template void gemm(const int64_t*, const int64_t*, int64_t*, int64_t, int64_t, int64_t);

Tensor matmul_kernel(std::span<const Tensor> in, const TensorType& type, SourceLoc loc) {
  (void)loc;
  const Shape &sa = in[0].shape(), &sb = in[1].shape();
  const int64_t m = sa[sa.rank() - 2], k = sa[sa.rank() - 1], n = sb[sb.rank() - 1];
  Tensor out = make_tensor(type.dtype, type.shape);
  // Walk the batch dims like a broadcast over "elements" that are whole matrices.
  Shape batch_out(type.shape.begin(), type.shape.end() - 2);
  Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  const Shape* shapes[2] = {&batch_a, &batch_b};
  const BroadcastLoop L = plan_broadcast(batch_out, shapes, 2);
  visit_dtype(type.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError("matmul on bool");
    } else {
      const T* a = static_cast<const T*>(in[0].impl()->data);
      const T* b = static_cast<const T*>(in[1].impl()->data);
      T* c = static_cast<T*>(out.impl()->data);
      const int64_t len = L.inner(), s0 = L.inner_stride(0), s1 = L.inner_stride(1);
      for_each_row(L, [&](int64_t o, const int64_t* off) {
        for (int64_t i = 0; i < len; ++i)
          gemm(a + (off[0] + i * s0) * m * k, b + (off[1] + i * s1) * k * n, c + (o + i) * m * n, m, k, n);
      });
    }
  });
  return out;
}

}  // namespace ag::detail::AG_KERNEL_NS
