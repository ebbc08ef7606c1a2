// Matrix multiplication with Eigen's GEMM; batched over broadcast leading dims. The same GEMM
// serves compiled code (the JIT binds this level's gemm for large or dynamic matmuls).
// Eigen's packed blocks of a product are on the stack up to 512 KB each
// (EIGEN_STACK_ALLOCATION_LIMIT, runtime/CMakeLists.txt).
#include <Eigen/Core>

#include <algorithm>

#include "../broadcast.h"
#include "ag/detail/parallel.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Products of at least this many multiply-adds run on the shared pool in blocks of m / 8 rows
// (256^3). W8's products (12.8M) ran slower in such blocks on 2 threads than whole on 1; from
// 256^3 up, 2 threads took less time (docs/performance.md, "Measured decisions": parallel GEMM).
// Below it, mid-size products run as two halves (kHalvedGemmWork).
constexpr int64_t kParallelGemmWork = int64_t{1} << 24;
// Products of at least this many multiply-adds, and under kParallelGemmWork, run as two halves
// on two threads or more: of rows when each half keeps kMinHalfRows rows (Eigen's kernels work
// in panels of 48 rows; halves of 32 rows cost 8%), else of columns from 2 * kMinHalfColumns
// (docs/performance.md, "Measured decisions": GEMM halves). An LSTM's per-step gate products
// (1M and 2M) gain from it since the pool's workers linger between loops (thread_pool.cpp). On
// one thread the product stays whole: the halves compute every element as the whole product
// does (kColumnCutMultiple), so the result does not depend on the thread count.
constexpr int64_t kHalvedGemmWork = int64_t{1} << 20;
constexpr int64_t kMinHalfRows = 48, kMinHalfColumns = 64;
// Where a half's cut falls so that each element of C is summed as in the whole product. Eigen
// computes C^T = B^T A^T: C's columns are its lhs rows, packed in panels of mr = 3 vector
// registers (48 floats on AVX-512, 24 doubles; 24 and 12 on AVX2), whose accumulation differs
// by panel width (a one-register panel sums even and odd k apart); C's rows are its rhs
// columns, in panels of nr = 4. A cut at a multiple of 48 columns, or of 16 rows, leaves every
// element in the same kind of panel as in the whole product, with the same k blocks (Eigen
// picks kc from k alone). The ParallelKernels tests compare the halves with the whole product
// bit for bit.
constexpr int64_t kColumnCutMultiple = 48, kRowCutMultiple = 16;

// A matrix-vector product (one column of C) streams its matrix once, a multiply-add per element
// loaded: from 2^17 elements (1 MB of doubles) up, 2 threads halve it (conjugate gradients'
// [512, 512] float64 product, 26 µs an iteration, docs/performance.md).
constexpr int64_t kParallelGemvWork = int64_t{1} << 17;

// The block size along a dim of C: about an eighth of it, a multiple of 16, at least 64 (smaller
// products lose more to Eigen's packing than threads win back). A function of the shape alone,
// never of the thread count, so that every thread count computes the same blocks.
int64_t gemm_block(int64_t dim) { return std::max<int64_t>(64, (dim / 8 + 15) / 16 * 16); }

}  // namespace

namespace {

// Large products are cut into blocks of rows of C, each one Eigen product of its own, and the blocks are spread over the shared pool. Eigen picks its
// cache blocking from each product's shape, so the blocks (and hence the float rounding) are
// the same on 1 thread as on many: the result does not depend on the thread count. A and B are
// Eigen expressions: maps, or transposes of maps (a transposed operand is packed as cheaply).
template <class A, class B, class T>
void gemm_blocks(const A& a, const B& b, T* c, int64_t m, int64_t k, int64_t n) {
  Eigen::Map<Mat<T>> C(c, m, n);
  if (k == 0) {
    C.setZero();
    return;
  }
  // Large products split by rows only (column blocks of a row-major C measured slower on W8,
  // before Eigen's blocks moved to the stack).
  // A matrix-vector product's blocks hold at least half of kParallelGemvWork elements: each is
  // an Eigen GEMV call of its own, and 64-row blocks of CG's product cost 4% on one thread.
  const int64_t size = n == 1 ? std::max(gemm_block(m), (kParallelGemvWork / 2 / std::max<int64_t>(k, 1) + 15) / 16 * 16)
                              : gemm_block(m);
  const int64_t work = m * k * n;
  const bool halve_rows = m >= 2 * kMinHalfRows, halve_columns = !halve_rows && n >= 2 * kMinHalfColumns;
  if (n > 1 && work >= kHalvedGemmWork && work < kParallelGemmWork && (halve_rows || halve_columns) &&
      parallel_threads() > 1) {
    // The cut nearest the middle at a multiple that keeps Eigen's panels (never 0: the halves
    // keep at least kMinHalfRows or kMinHalfColumns).
    const int64_t dim = halve_rows ? m : n, multiple = halve_rows ? kRowCutMultiple : kColumnCutMultiple;
    const int64_t half = std::max<int64_t>(multiple, (dim / 2 + multiple / 2) / multiple * multiple);
    parallel_for(2, 1, [&](int64_t first, int64_t last) {
      for (int64_t h = first; h < last; ++h) {
        const int64_t at = h == 0 ? 0 : half, len = h == 0 ? half : dim - half;
        if (halve_rows)
          C.middleRows(at, len).noalias() = a.middleRows(at, len) * b;
        else
          C.middleCols(at, len).noalias() = a * b.middleCols(at, len);
      }
    });
    return;
  }
  if (work < (n == 1 ? kParallelGemvWork : kParallelGemmWork) || m < 2 * size) {
    C.noalias() = a * b;
    return;
  }
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
  switch (transposes & 3) {
    case 0: return gemm_blocks(A, B, c, m, k, n);
    case 1: return gemm_blocks(A.transpose(), B, c, m, k, n);
    case 2: return gemm_blocks(A, B.transpose(), c, m, k, n);
    default: return gemm_blocks(A.transpose(), B.transpose(), c, m, k, n);
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
