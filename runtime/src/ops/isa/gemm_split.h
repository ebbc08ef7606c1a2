// How a row-major product C[m, n] = A[m, k] B[k, n] is spread over threads: the one decision
// that the GEMM (matmul.cpp) and the GEMM with a packed B (matmul_packed.cpp) share, so the two
// compute every element of C the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ag/detail/gemm_halves.h"
#include "ag/detail/parallel.h"

namespace ag::detail::AG_KERNEL_NS {

// Products of at least this many multiply-adds run on the shared pool in blocks of m / 8 rows
// (256^3). W8's products (12.8M) ran slower in such blocks on 2 threads than whole on 1; from
// 256^3 up, 2 threads took less time (docs/performance.md, "Measured decisions": parallel GEMM).
// Below it, mid-size products run as two halves (kHalvedGemmWork).
inline constexpr int64_t kParallelGemmWork = int64_t{1} << 24;
// Products of at least this many multiply-adds, and under kParallelGemmWork, run as two halves
// on two threads or more: of rows when each half keeps kMinHalfRows rows (Eigen's kernels work
// in panels of 48 rows; halves of 32 rows cost 8%), else of columns from 2 * kMinHalfColumns
// (docs/performance.md, "Measured decisions": GEMM halves). Whether a product that qualifies
// runs as halves is then measured per shape, in the running process (gemm_halves.h): an LSTM's
// per-step gate products (1M and 2M) gained 0.64x on one VM phase and lost 1.4x on another. On
// one thread the product stays whole: the halves compute every element as the whole product
// does (kColumnCutMultiple), so the result depends neither on the thread count nor on the trial.
inline constexpr int64_t kHalvedGemmWork = int64_t{1} << 20;
inline constexpr int64_t kMinHalfRows = 48, kMinHalfColumns = 64;
// Where a half's cut falls so that each element of C is summed as in the whole product. Eigen
// computes C^T = B^T A^T: C's columns are its lhs rows, packed in panels of mr = 3 vector
// registers (48 floats on AVX-512, 24 doubles; 24 and 12 on AVX2), whose accumulation differs
// by panel width (a one-register panel sums even and odd k apart); C's rows are its rhs
// columns, in panels of nr = 4. A cut at a multiple of 48 columns, or of 16 rows, leaves every
// element in the same kind of panel as in the whole product, with the same k blocks (Eigen
// picks kc from k alone). The ParallelKernels tests compare the halves with the whole product
// bit for bit.
inline constexpr int64_t kColumnCutMultiple = 48, kRowCutMultiple = 16;

// A matrix-vector product (one column of C) streams its matrix once, a multiply-add per element
// loaded: from 2^17 elements (1 MB of doubles) up, 2 threads halve it (conjugate gradients'
// [512, 512] float64 product, 26 µs an iteration, docs/performance.md).
inline constexpr int64_t kParallelGemvWork = int64_t{1} << 17;

// The block size along a dim of C: about an eighth of it, a multiple of 16, at least 64 (smaller
// products lose more to Eigen's packing than threads win back). A function of the shape alone,
// never of the thread count, so that every thread count computes the same blocks.
inline int64_t gemm_block(int64_t dim) { return std::max<int64_t>(64, (dim / 8 + 15) / 16 * 16); }

// Large products (from kParallelGemmWork) in blocks of rows on the pool, each block an Eigen
// product of its own: decided by the shape alone.
inline bool gemm_in_row_blocks(int64_t m, int64_t k, int64_t n) {
  return n > 1 && m * k * n >= kParallelGemmWork && m >= 2 * gemm_block(m);
}

struct GemmSplit {
  enum Kind { Whole, RowHalves, ColumnHalves, RowBlocks } kind = Whole;
  int64_t cut = 0;    // the halves': the first half's rows (RowHalves) or columns (ColumnHalves)
  int64_t block = 0;  // RowBlocks': rows per block
};

// The split of a product of k > 0 (the caller handles k == 0). Halves only when this thread may
// use more than one; row blocks by the shape alone.
inline GemmSplit gemm_split(int64_t m, int64_t k, int64_t n) {
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
    return {halve_rows ? GemmSplit::RowHalves : GemmSplit::ColumnHalves, half, 0};
  }
  if (work < (n == 1 ? kParallelGemvWork : kParallelGemmWork) || m < 2 * size) return {};
  return {GemmSplit::RowBlocks, 0, size};
}

// A trial of a product's halves (GemmHalvesTrial::timed) reads the half of C [m, n] the other
// thread computed, a load per cache line, so that its time includes the transfer the consumer
// on this thread would pay (gemm_halves.h). The second half: the calling thread runs the first.
template <class T>
void pull_second_half(const T* c, int64_t m, int64_t n, const GemmSplit& split) {
  const bool rows = split.kind == GemmSplit::RowHalves;
  const int64_t r0 = rows ? split.cut : 0, c0 = rows ? 0 : split.cut;
  constexpr int64_t kPerLine = std::max<int64_t>(1, 64 / static_cast<int64_t>(sizeof(T)));
  T sum{};
  for (int64_t r = r0; r < m; ++r)
    for (int64_t j = c0; j < n; j += kPerLine) sum += c[r * n + j];
  static_cast<void>(*static_cast<volatile T*>(&sum));
}

// A product's key in the halves' trial (gemm_halves.h).
template <class T>
GemmShapeKey gemm_shape_key(int64_t m, int64_t k, int64_t n, int64_t transposes, bool packed_b) {
  const char* dtype = std::is_same_v<T, float> ? "float32" : std::is_same_v<T, double> ? "float64" : std::is_same_v<T, int32_t> ? "int32" : "int64";
  return {m, k, n, dtype, transposes & 3, packed_b};
}

}  // namespace ag::detail::AG_KERNEL_NS
