// Matrix multiplication with Eigen's GEMM; batched over broadcast leading dims. The same GEMM
// serves compiled code (the JIT binds this level's gemm for large or dynamic matmuls).
// Eigen's packed blocks of a product are on the stack up to 512 KB each
// (EIGEN_STACK_ALLOCATION_LIMIT, runtime/CMakeLists.txt).
#include <Eigen/Core>

#include <algorithm>

#include "../broadcast.h"
#include "ag/detail/parallel.h"
#include "gemm_split.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Large products are cut into blocks of rows of C, each one Eigen product of its own, and the
// blocks are spread over the shared pool (gemm_split.h). Eigen picks its cache blocking from each product's shape, so the blocks (and hence the float rounding) are
// the same on 1 thread as on many: the result does not depend on the thread count. A and B are
// Eigen expressions: maps, or transposes of maps (a transposed operand is packed as cheaply).
// `key` names the product in the halves' trial (gemm_halves.h).
template <class A, class B, class T>
void gemm_blocks(const A& a, const B& b, T* c, int64_t m, int64_t k, int64_t n, const GemmShapeKey& key) {
  Eigen::Map<Mat<T>> C(c, m, n);
  if (k == 0) {
    C.setZero();
    return;
  }
  // Large products split by rows only (column blocks of a row-major C measured slower on W8,
  // before Eigen's blocks moved to the stack).
  const GemmSplit split = gemm_split(m, k, n);
  if (split.kind == GemmSplit::RowHalves || split.kind == GemmSplit::ColumnHalves) {
    const GemmHalvesTrial trial(key);
    if (!trial.halves()) {
      C.noalias() = a * b;
      return;
    }
    const bool halve_rows = split.kind == GemmSplit::RowHalves;
    const int64_t dim = halve_rows ? m : n, half = split.cut;
    parallel_for(2, 1, [&](int64_t first, int64_t last) {
      for (int64_t h = first; h < last; ++h) {
        const int64_t at = h == 0 ? 0 : half, len = h == 0 ? half : dim - half;
        if (halve_rows)
          C.middleRows(at, len).noalias() = a.middleRows(at, len) * b;
        else
          C.middleCols(at, len).noalias() = a * b.middleCols(at, len);
      }
    });
    if (trial.timed()) pull_second_half(c, m, n, split);
    return;
  }
  if (split.kind == GemmSplit::Whole) {
    C.noalias() = a * b;
    return;
  }
  const int64_t size = split.block;
  const int64_t blocks = (m + size - 1) / size;
  parallel_for(blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t blk = first; blk < last; ++blk) {
      const int64_t at = blk * size, len = std::min(size, m - at);
      C.middleRows(at, len).noalias() = a.middleRows(at, len) * b;
    }
  });
}

}  // namespace

template <class T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  const Eigen::Map<const Mat<T>> A(a, transposes & 1 ? k : m, transposes & 1 ? m : k);
  const Eigen::Map<const Mat<T>> B(b, transposes & 2 ? n : k, transposes & 2 ? k : n);
  const GemmShapeKey key = gemm_shape_key<T>(m, k, n, transposes, false);
  switch (transposes & 3) {
    case 0: return gemm_blocks(A, B, c, m, k, n, key);
    case 1: return gemm_blocks(A.transpose(), B, c, m, k, n, key);
    case 2: return gemm_blocks(A, B.transpose(), c, m, k, n, key);
    default: return gemm_blocks(A.transpose(), B.transpose(), c, m, k, n, key);
  }
}
template void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t);
template void gemm(const double*, const double*, double*, int64_t, int64_t, int64_t, int64_t);
template void gemm(const int32_t*, const int32_t*, int32_t*, int64_t, int64_t, int64_t, int64_t);
template void gemm(const int64_t*, const int64_t*, int64_t*, int64_t, int64_t, int64_t, int64_t);

Tensor matmul_kernel(std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  (void)loc;
  const Shape &sa = in[0].shape(), &sb = in[1].shape();
  const bool ta = attrs.transpose_a(), tb = attrs.transpose_b();
  const int64_t m = sa[sa.rank() - (ta ? 1 : 2)], k = sa[sa.rank() - (ta ? 2 : 1)], n = sb[sb.rank() - (tb ? 2 : 1)];
  const int64_t transposes = (ta ? 1 : 0) | (tb ? 2 : 0);
  Tensor out = make_tensor(type.dtype, type.shape);
  // Walk the batch dims like a broadcast over "elements" that are whole matrices.
  Shape batch_out(type.shape.begin(), type.shape.end() - 2);
  Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  const Shape* shapes[2] = {&batch_a, &batch_b};
  const BroadcastLoop L = plan_broadcast(batch_out, shapes, 2);
  visit_compute_dtype(type.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError("matmul on bool");
    } else {
      const T* a = static_cast<const T*>(detail::impl_of(in[0])->data);
      const T* b = static_cast<const T*>(detail::impl_of(in[1])->data);
      T* c = static_cast<T*>(detail::impl_of(out)->data);
      const int64_t len = L.inner(), s0 = L.inner_stride(0), s1 = L.inner_stride(1);
      for_each_row(L, [&](int64_t o, const int64_t* off) {
        for (int64_t i = 0; i < len; ++i)
          gemm(a + (off[0] + i * s0) * m * k, b + (off[1] + i * s1) * k * n, c + (o + i) * m * n, m, k, n, transposes);
      });
    }
  });
  return out;
}

}  // namespace ag::detail::AG_KERNEL_NS
