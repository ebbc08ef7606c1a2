// Matrix-vector products whose matrix has a short static side, as reductions in vector registers
// (lower_reduce_vector.cpp) instead of a GEMM call. With the matrix stored [R, C] and C whole
// vectors, at most Emitter::kMaxRowVectors (rows) or kMaxColumnVectors (columns) of them:
//   A v   (A not transposed), v^T A^T: each output is a row of the matrix times the vector, a
//         row reduction (R outputs);
//   A^T v, u^T A: each output is a column of the matrix times the vector, a column reduction
//         (C outputs), with several independent chains of multiply-adds over the rows.
// A logistic regression's step is one of each ([4096, 16] . [16, 1] and its transpose): Eigen's
// GEMV took 6.8 and 3.6 µs for them (docs/performance.md).
#include "emitter.h"

namespace ag::jit {
namespace {

// Independent multiply-add chains enough to cover a float FMA's latency (4 cycles, 2 a cycle).
constexpr int64_t kChains = 8;

llvm::Value* contracted(llvm::Value* v) {
  if (auto* inst = llvm::dyn_cast<llvm::Instruction>(v)) {
    llvm::FastMathFlags flags = inst->getFastMathFlags();
    flags.setAllowContract();
    inst->setFastMathFlags(flags);
  }
  return v;
}

}  // namespace

bool Emitter::lower_matvec(Scope& s, uint32_t i, const LVal& a, const LVal& bm, llvm::Value* c) {
  const Node& n = s.graph().nodes[i];
  const DType d = n.outputs[0].dtype;
  if (!program().config.vector_loops || (d != DType::Float32 && d != DType::Float64) || a.dims.size() != 2 ||
      bm.dims.size() != 2 || !a.strides.empty() || !bm.strides.empty())
    return false;
  const bool ta = n.attrs.transpose_a(), tb = n.attrs.transpose_b();
  const LVal* matrix = nullptr;
  const LVal* vector = nullptr;  // [k, 1] or [1, k]: contiguous either way
  bool rows = false;
  if (is_const(bm.dims[tb ? 0 : 1], 1)) {  // A v
    matrix = &a, vector = &bm, rows = !ta;
  } else if (is_const(a.dims[ta ? 1 : 0], 1)) {  // u^T B
    matrix = &bm, vector = &a, rows = tb;
  } else {
    return false;
  }
  const auto* short_side = llvm::dyn_cast<llvm::ConstantInt>(matrix->dims[1]);
  const int64_t lanes = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  if (!short_side || lanes < 2 || short_side->getSExtValue() % lanes != 0 ||
      short_side->getSExtValue() / lanes > (rows ? kMaxRowVectors : kMaxColumnVectors))
    return false;
  const int64_t width = short_side->getSExtValue(), blocks = width / lanes;

  llvm::Type* et = mem_type(d);
  auto* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(lanes));
  const llvm::Align align(dtype_size(d));
  auto load_vector = [&](llvm::Value* ptr, llvm::Value* at) {
    return b_.CreateAlignedLoad(vt, b_.CreateInBoundsGEP(et, ptr, at), align);
  };
  const Combine add = [&](llvm::Value* x, llvm::Value* y) {
    llvm::Value* sum = b_.CreateFAdd(x, y);
    llvm::FastMathFlags flags;
    flags.setAllowReassoc();
    flags.setAllowContract();
    llvm::cast<llvm::Instruction>(sum)->setFastMathFlags(flags);
    return sum;
  };
  // The matrix's row `row`, block `blk`, times the vector's matching elements: its block (rows)
  // or its element `row` (columns).
  const RowBlock element = [&](llvm::Value* row, llvm::Value* blk, llvm::Value*) {  // whole blocks: no mask
    llvm::Value* first = b_.CreateMul(blk, i64(lanes));
    llvm::Value* at = b_.CreateAdd(b_.CreateMul(row, i64(width)), first);
    llvm::Value* factor = rows ? load_vector(vector->ptr, first)
                               : b_.CreateVectorSplat(static_cast<unsigned>(lanes), load(d, vector->ptr, row));
    return contracted(b_.CreateFMul(load_vector(matrix->ptr, at), factor));
  };
  llvm::Value* zero = constant(d, 0, 0);
  if (rows) row_vectors(d, blocks, /*tail=*/0, matrix->dims[0], zero, add, element, c);
  else column_vectors(d, blocks, zero, add, element, i64(0), matrix->dims[0], c, std::max<int64_t>(1, kChains / blocks));
  return true;
}

}  // namespace ag::jit
