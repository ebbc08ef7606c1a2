// The GEMM with a packed B (KernelSet::gemm_pack_b_*): a product's B operand packed once into
// Eigen's panels and read by every product of the same shapes after it. Compiled code packs a
// weight that stays the same through a staged loop before the loop (an LSTM's gate weights:
// Eigen packed them again in every step, 15-17% of the step; lower/lower_control.cpp).
//
// The products are Eigen's own: its blocking, its panels, its gebp kernel, in the order its
// sequential GEMM runs them (Eigen/src/Core/products/GeneralMatrixMatrix.h), split over threads
// as matmul.cpp's gemm splits (gemm_split.h). So C has the bits gemm gives, on any thread count
// (ParallelKernels.PackedOperandProductsHaveTheGemmsBits).
#include <Eigen/Core>

#include <algorithm>
#include <cstdint>

#include "ag/detail/kernel_set.h"
#include "gemm_split.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

using Eigen::Index;
namespace ei = Eigen::internal;

// Eigen computes the row-major C = op(A) op(B) as the column-major C^T = op(B)^T op(A)^T: op(B)^T
// [n, k] is its lhs, packed in blocks of mc rows by kc steps of k; op(A)^T [k, m] its rhs, packed
// kc by nc per block; C^T [n, m] the result, with n rows apart.
template <class T>
struct Blocking {
  Index m, k, n, kc, mc, nc;
  Blocking(Index m_, Index k_, Index n_) : m(m_), k(k_), n(n_), kc(k_), mc(n_), nc(m_) {
    ei::computeProductBlockingSizes<T, T, 1>(kc, mc, nc, Index{1});  // as gemm_blocking_space does
    mc = std::min(n, mc);
    nc = std::min(m, nc);
  }
  // f(i2, rows, k2, depth, offset) for each lhs block in Eigen's order (rows of C^T outer, k
  // inner), `offset` its first element in the packed buffer; returns the buffer's elements. Each
  // block starts on a 64-byte boundary: gebp loads the packed lhs with aligned loads.
  template <class F>
  Index for_each_block(F&& f) const {
    constexpr Index kAlign = 64 / sizeof(T);
    Index offset = 0;
    for (Index i2 = 0; i2 < n; i2 += mc) {
      const Index rows = std::min(i2 + mc, n) - i2;
      for (Index k2 = 0; k2 < k; k2 += kc) {
        const Index depth = std::min(k2 + kc, k) - k2;
        f(i2, rows, k2, depth, offset);
        offset += (rows * depth + kAlign - 1) / kAlign * kAlign;
      }
    }
    return offset;
  }
};

// The packed buffer starts with the product it was packed for (a product of other shapes, never
// made by agc's code, reads B itself); its panels follow at the next 64-byte boundary.
struct PackedHeader {
  int64_t m, k, n, transposes;
};
constexpr size_t kPanelsSlack = sizeof(PackedHeader) + 63;
template <class P>
P* panels_of(P* packed) {
  const auto at = (reinterpret_cast<uintptr_t>(packed) + sizeof(PackedHeader) + 63) / 64 * 64;
  return reinterpret_cast<P*>(at);
}

template <class T, int LhsOrder>
void pack(const T* b, T* panels, const Blocking<T>& bl, bool b_transposed) {
  using Traits = ei::gebp_traits<T, T>;
  using LhsMapper = ei::const_blas_data_mapper<T, Index, LhsOrder>;
  ei::gemm_pack_lhs<T, Index, LhsMapper, Traits::mr, Traits::LhsProgress, typename Traits::LhsPacket4Packing, LhsOrder> pack_lhs;
  const LhsMapper lhs(b, b_transposed ? bl.k : bl.n);
  bl.for_each_block([&](Index i2, Index rows, Index k2, Index depth, Index offset) {
    pack_lhs(panels + offset, lhs.getSubMapper(i2, k2), depth, rows);
  });
}

// C^T's rows [r0, r1) by columns [c0, c1) (C's columns by rows), zeroed first: gebp adds. A range
// starts at a panel's first row (the cuts of gemm_split.h), so every element is summed in the
// kind of panel, and with the k blocks, of the whole product.
template <class T, int RhsOrder>
void multiply(const T* panels, const T* a, T* c, const Blocking<T>& bl, bool a_transposed, Index r0, Index r1, Index c0,
              Index c1) {
  using Traits = ei::gebp_traits<T, T>;
  using RhsMapper = ei::const_blas_data_mapper<T, Index, RhsOrder>;
  using ResMapper = ei::blas_data_mapper<T, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
  ei::gemm_pack_rhs<T, Index, RhsMapper, Traits::nr, RhsOrder> pack_rhs;
  ei::gebp_kernel<T, T, Index, ResMapper, Traits::mr, Traits::nr, false, false> gebp;
  const RhsMapper rhs(a, a_transposed ? bl.m : bl.k);
  const ResMapper res(c, bl.n);
  for (Index j = c0; j < c1; ++j) std::fill(c + j * bl.n + r0, c + j * bl.n + r1, T(0));
  const Index nc = std::min(bl.nc, c1 - c0);
  namespace internal = Eigen::internal;  // Eigen's macro names it unqualified
  ei_declare_aligned_stack_constructed_variable(T, block_b, static_cast<size_t>(bl.kc * nc), nullptr);
  bl.for_each_block([&](Index i2, Index rows, Index k2, Index depth, Index offset) {
    const Index lo = std::max(i2, r0), hi = std::min(i2 + rows, r1);
    if (lo >= hi) return;
    for (Index j2 = c0; j2 < c1; j2 += nc) {
      const Index cols = std::min(j2 + nc, c1) - j2;
      pack_rhs(block_b, rhs.getSubMapper(k2, j2), depth, cols);
      gebp(res.getSubMapper(lo, j2), panels + offset + (lo - i2) * depth, block_b, hi - lo, depth, cols, T(1));
    }
  });
}

// Whether gemm runs this product through Eigen's GEMM in one piece or in halves: not a
// coefficient-wise small product (Eigen below 20 = k + m + n), not a matrix-vector one, not
// row blocks on the pool (each block its own blocking).
bool packs(int64_t m, int64_t k, int64_t n) {
  return m >= 2 && n >= 2 && k >= 1 && k + m + n >= 20 && !gemm_in_row_blocks(m, k, n);
}

}  // namespace

template <class T>
int64_t gemm_packed_b_bytes(int64_t m, int64_t k, int64_t n) {
  if (!packs(m, k, n)) return 0;
  const Index elements = Blocking<T>(m, k, n).for_each_block([](Index, Index, Index, Index, Index) {});
  return static_cast<int64_t>(kPanelsSlack + static_cast<size_t>(elements) * sizeof(T));
}

template <class T>
void gemm_pack_b(const T* b, void* packed, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  *static_cast<PackedHeader*>(packed) = {m, k, n, transposes};
  T* panels = reinterpret_cast<T*>(panels_of(static_cast<char*>(packed)));
  const Blocking<T> bl(m, k, n);
  if (transposes & 2)
    pack<T, Eigen::RowMajor>(b, panels, bl, true);
  else
    pack<T, Eigen::ColMajor>(b, panels, bl, false);
}

template <class T>
void gemm_packed_b(const T* a, const T* b, const void* packed, T* c, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  const auto* h = static_cast<const PackedHeader*>(packed);
  if (!h || h->m != m || h->k != k || h->n != n || h->transposes != transposes || !packs(m, k, n))
    return gemm(a, b, c, m, k, n, transposes);
  count_gemm_packed_b_product();
  const T* panels = reinterpret_cast<const T*>(panels_of(static_cast<const char*>(packed)));
  const Blocking<T> bl(m, k, n);
  const bool ta = transposes & 1;
  auto part = [&](Index r0, Index r1, Index c0, Index c1) {
    if (ta)
      multiply<T, Eigen::RowMajor>(panels, a, c, bl, true, r0, r1, c0, c1);
    else
      multiply<T, Eigen::ColMajor>(panels, a, c, bl, false, r0, r1, c0, c1);
  };
  const GemmSplit split = gemm_split(m, k, n);
  if (split.kind == GemmSplit::Whole) return part(0, n, 0, m);
  const GemmHalvesTrial trial(gemm_shape_key<T>(m, k, n, transposes, true));
  if (!trial.halves()) return part(0, n, 0, m);
  parallel_for(2, 1, [&](int64_t first, int64_t last) {
    for (int64_t half = first; half < last; ++half) {
      if (split.kind == GemmSplit::RowHalves)  // C's rows: C^T's columns
        half == 0 ? part(0, n, 0, split.cut) : part(0, n, split.cut, m);
      else
        half == 0 ? part(0, split.cut, 0, m) : part(split.cut, n, 0, m);
    }
  });
  if (trial.timed()) pull_second_half(c, m, n, split);
}

template int64_t gemm_packed_b_bytes<float>(int64_t, int64_t, int64_t);
template int64_t gemm_packed_b_bytes<double>(int64_t, int64_t, int64_t);
template void gemm_pack_b(const float*, void*, int64_t, int64_t, int64_t, int64_t);
template void gemm_pack_b(const double*, void*, int64_t, int64_t, int64_t, int64_t);
template void gemm_packed_b(const float*, const float*, const void*, float*, int64_t, int64_t, int64_t, int64_t);
template void gemm_packed_b(const double*, const double*, const void*, double*, int64_t, int64_t, int64_t, int64_t);

}  // namespace ag::detail::AG_KERNEL_NS
