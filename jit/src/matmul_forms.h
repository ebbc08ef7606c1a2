// Which code a matmul becomes, decided from its static shapes (lower/lower_matmul.cpp): a kernel
// emitted for its shape, or a call of the process's GEMM; and the products of a staged loop whose
// B is packed once before the loop (lower/lower_control.cpp). LLVM-free: the plan counts them.
#pragma once

#include <cstdint>
#include <vector>

#include "ag/graph/graph.h"

namespace ag::jit {

// Products up to this many multiply-adds are emitted inline (Eigen wins above ~32^3).
inline constexpr int64_t kInlineMatMulWork = 32 * 32 * 32;
// Rows up to this many elements are handled as one panel of LLVM vectors; wider rows in panels
// of this many columns.
inline constexpr int64_t kVectorRowMax = 32;
// A kernel unrolls k up to this many steps (its vector form); beyond, it is a loop over k.
inline constexpr int64_t kUnrolledKMax = 64;

// A product [m, k] x [k, n] of these static sizes runs as a kernel emitted for it.
inline bool matmul_inline(int64_t m, int64_t k, int64_t n) {
  return m * k * n <= kInlineMatMulWork && (n > kVectorRowMax || k <= kUnrolledKMax);
}

// A product of a While body whose B operand is the body's parameter `param`, past the loop
// variables: the loop does not change it.
struct LoopInvariantOperand {
  uint32_t node;
  size_t param;
};
// The top-level MatMul nodes of a While body (`loop_vars` loop variables) whose B operand stays
// the same through the loop and that call the GEMM on static float shapes of rank 2 with more
// than one row and column: their B is packed before the loop and each iteration's product reads
// the packed panels (KernelSet::gemm_pack_b_f32; an LSTM's gate weights). In node order.
std::vector<LoopInvariantOperand> loop_invariant_gemm_operands(const Graph& body, int64_t loop_vars);

}  // namespace ag::jit
