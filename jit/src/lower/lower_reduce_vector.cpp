// Reductions over short rows or short columns in vector registers: a reduction's fused operand
// evaluated a register of elements at a time (lower_reduce.cpp, lower_reduce_parallel.cpp), or a
// matrix-vector product with a short static side (lower_matvec.cpp).
//
// Columns: a reduction over rows whose kept columns are up to kMaxColumnVectors vectors wide
// accumulates each block of columns in a register over the rows. Rows: a reduction of rows of up
// to kMaxRowVectors vectors reduces
// each row to one vector, then folds the vectors of `lanes` rows into one vector holding their
// results (a transposing tree of shuffles and adds), stored whole. One horizontal reduction per
// row spent five or six shuffles on it, all on one port: a row sum of [4096, 16] floats took
// 8.1 µs, a GEMV of the same shape 6.8.
#include "emitter.h"

#include <limits>

namespace ag::jit {
namespace {

// Whether every buffer of the walk reads its inner dim contiguously or broadcasts it.
template <class IsConst>
bool inner_dims_contiguous(const Walk& w, IsConst is_const) {
  for (const auto& [leaf, strides] : w.strides)
    if (!is_const(strides.back(), 0) && !is_const(strides.back(), 1)) return false;
  return true;
}

// The order in which the tree takes the rows of a group: folding vectors a and b over a group
// of g lanes keeps a's fold in the first g/2 lanes of each group and b's in the others, so the
// tree's leaves come out bit-reversed. leaf[r]: the leaf whose result lands in lane r.
std::vector<size_t> tree_leaf_of_lane(unsigned lanes) {
  std::vector<std::vector<size_t>> level;
  for (size_t p = 0; p < lanes; ++p) level.emplace_back(lanes, p);
  for (unsigned g = lanes; g > 1; g /= 2) {
    std::vector<std::vector<size_t>> next;
    for (size_t p = 0; p + 1 < level.size(); p += 2) {
      std::vector<size_t> folded(lanes);
      for (unsigned i = 0; i < lanes; ++i) folded[i] = i % g < g / 2 ? level[p][i] : level[p + 1][i];
      next.push_back(std::move(folded));
    }
    level = std::move(next);
  }
  return level[0];
}

}  // namespace

Emitter::RowBlock Emitter::walk_blocks(Scope& s, ValueId x, const Walk& w, DType d) {
  const unsigned lanes = static_cast<unsigned>(vector_bytes_ / static_cast<int64_t>(dtype_size(d)));
  return [this, &s, x, &w, lanes](llvm::Value* row, llvm::Value* block, llvm::Value* mask) {
    std::vector<std::pair<const LVal*, llvm::Value*>> loaded;  // per block: its own elements
    return eval_vector(s, x, w, {row}, b_.CreateMul(block, i64(lanes)), lanes, mask, loaded);
  };
}

// A column reduction with short rows (a batch norm's statistics over [N, 16], a bias gradient)
// accumulated in memory is a load, an add and a store per element, each waiting for the last
// (412 µs for 6.4 MB of [N, 16] floats, 15 GB/s); in registers, one vector add per row and block.
bool Emitter::column_vectors_fit(Scope& s, ValueId x, const Walk& w, const LVal& acc_view, DType d) {
  if (!program().config.vector_loops || (d != DType::Float32 && d != DType::Float64) || w.dims.size() != 2) return false;
  const std::vector<llvm::Value*>* acc_strides = w.find(&acc_view);
  if (!acc_strides || !is_const((*acc_strides)[0], 0) || !is_const((*acc_strides)[1], 1)) return false;
  if (!inner_dims_contiguous(w, [&](llvm::Value* v, int64_t c) { return is_const(v, c); })) return false;
  const auto* columns = llvm::dyn_cast<llvm::ConstantInt>(w.dims[1]);
  const int64_t lanes = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  return columns && lanes >= 2 && columns->getSExtValue() % lanes == 0 && columns->getSExtValue() / lanes <= kMaxColumnVectors &&
         vectorizable(s, x, d);
}

void Emitter::column_reduction_vector(Scope& s, ValueId x, const Walk& w, DType d, llvm::Value* init, const Combine& combine,
                                      llvm::Value* first, llvm::Value* count, llvm::Value* out) {
  const int64_t lanes = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  column_vectors(d, llvm::cast<llvm::ConstantInt>(w.dims[1])->getSExtValue() / lanes, init, combine, walk_blocks(s, x, w, d),
                 first, count, out, 1);
}

void Emitter::column_vectors(DType d, int64_t blocks, llvm::Value* init, const Combine& combine, const RowBlock& element,
                             llvm::Value* first, llvm::Value* count, llvm::Value* out, int64_t chains) {
  const unsigned lanes = static_cast<unsigned>(vector_bytes_ / static_cast<int64_t>(dtype_size(d)));
  const bool was = emitting_vectors_;
  emitting_vectors_ = true;
  const auto nb = static_cast<size_t>(blocks);
  // Row r goes to set (r - first) % chains: `chains` independent chains of adds per block.
  auto rows_into = [&](std::vector<llvm::Value*> sums, llvm::Value* row0, int64_t sets) {
    for (int64_t c = 0; c < sets; ++c)
      for (size_t blk = 0; blk < nb; ++blk) {
        llvm::Value*& sum = sums[static_cast<size_t>(c) * nb + blk];
        sum = combine(sum, element(b_.CreateAdd(row0, i64(c)), i64(static_cast<int64_t>(blk)), nullptr));
      }
    return sums;
  };
  const std::vector<llvm::Value*> start(nb * static_cast<size_t>(chains), b_.CreateVectorSplat(lanes, init));
  llvm::Value* rounds = chains == 1 ? count : b_.CreateUDiv(count, i64(chains));
  std::vector<llvm::Value*> sums = loop_carry(rounds, start, [&](const std::vector<llvm::Value*>& partial, llvm::Value* k) {
    return rows_into(partial, b_.CreateAdd(first, b_.CreateMul(k, i64(chains))), chains);
  }, "columns");
  if (chains > 1) {
    // The rows left over go into the first set, then the sets are combined in order.
    llvm::Value* done = b_.CreateMul(rounds, i64(chains));
    const std::vector<llvm::Value*> set0(sums.begin(), sums.begin() + static_cast<std::ptrdiff_t>(nb));
    const std::vector<llvm::Value*> rest = loop_carry(b_.CreateSub(count, done), set0, [&](const std::vector<llvm::Value*>& partial, llvm::Value* k) {
      return rows_into(partial, b_.CreateAdd(first, b_.CreateAdd(done, k)), 1);
    }, "columns.rest");
    std::copy(rest.begin(), rest.end(), sums.begin());
    for (size_t c = 1; c < static_cast<size_t>(chains); ++c)
      for (size_t blk = 0; blk < nb; ++blk) sums[blk] = combine(sums[blk], sums[c * nb + blk]);
  }
  emitting_vectors_ = was;
  for (size_t blk = 0; blk < nb; ++blk)
    b_.CreateAlignedStore(sums[blk], b_.CreateInBoundsGEP(mem_type(d), out, i64(static_cast<int64_t>(blk) * lanes)),
                          llvm::Align(dtype_size(d)));
}

bool Emitter::row_vectors_fit(Scope& s, ValueId x, const Walk& w, const LVal& acc_view, DType d) {
  if (w.dims.size() != 2) return false;
  // The output's one kept dim is contiguous: its stride is 1, or (a count known at run time)
  // 0 when the count is 1, where the stride does not matter.
  const std::vector<llvm::Value*>* acc_strides = w.find(&acc_view);
  if (!acc_strides || !is_const((*acc_strides)[1], 0) ||
      (llvm::isa<llvm::ConstantInt>((*acc_strides)[0]) && !is_const((*acc_strides)[0], 1)))
    return false;
  return rows_fit_vectors(s, x, w, d);
}

bool Emitter::rows_fit_vectors(Scope& s, ValueId x, const Walk& w, DType d) {
  if (!program().config.vector_loops || (d != DType::Float32 && d != DType::Float64) || w.dims.size() != 2) return false;
  if (!inner_dims_contiguous(w, [&](llvm::Value* v, int64_t c) { return is_const(v, c); })) return false;
  const auto* row = llvm::dyn_cast<llvm::ConstantInt>(w.dims[1]);
  const int64_t lanes = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  if (!row || lanes < 2) return false;
  const int64_t columns = row->getSExtValue();
  const auto* rows = llvm::dyn_cast<llvm::ConstantInt>(w.dims[0]);
  const bool fits = columns % lanes == 0 || row_tail_fits(rows ? rows->getSExtValue() : -1, columns, d);
  return fits && (columns + lanes - 1) / lanes <= kMaxRowVectors && vectorizable(s, x, d);
}

llvm::Value* Emitter::lanes_below(unsigned lanes, int64_t tail) {
  if (tail <= 0) return nullptr;
  std::vector<llvm::Constant*> lane_in;
  for (unsigned l = 0; l < lanes; ++l) lane_in.push_back(b_.getInt1(l < static_cast<unsigned>(tail)));
  return llvm::ConstantVector::get(lane_in);
}

bool Emitter::row_tail_fits(int64_t rows, int64_t columns, DType d) const {
  const int64_t lanes = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  if (rows >= 0 && rows * columns < kMinPartialRowElements) return false;
  if (vector_bytes_ == 64) return columns > lanes / 2;
  return vector_bytes_ == 32 && columns > lanes;
}

void Emitter::row_vectors(DType d, int64_t blocks, int64_t tail, llvm::Value* rows, llvm::Value* init, const Combine& combine,
                          const RowBlock& element, llvm::Value* out, const std::function<llvm::Value*(llvm::Value*)>& finish) {
  const unsigned lanes = static_cast<unsigned>(vector_bytes_ / static_cast<int64_t>(dtype_size(d)));
  auto result = [&](llvm::Value* v) { return finish ? finish(v) : v; };
  const bool was = emitting_vectors_;
  emitting_vectors_ = true;
  // The partial block's lanes: its `tail` elements read, init in the others (so that the tree
  // combines nothing that is not the row's).
  llvm::Value* tail_mask = lanes_below(lanes, tail);
  llvm::Value* splat_init = b_.CreateVectorSplat(lanes, init);
  auto block_of = [&](llvm::Value* r, int64_t blk) {
    if (!tail_mask || blk + 1 < blocks) return element(r, i64(blk), nullptr);
    return b_.CreateSelect(tail_mask, element(r, i64(blk), tail_mask), splat_init, "rows.tail");
  };
  // Rows' blocks combined into one vector each (lane j: the row's elements j, j + lanes, ...).
  auto row_vectors_of = [&](const std::vector<llvm::Value*>& row) {
    std::vector<llvm::Value*> v;
    for (llvm::Value* r : row) v.push_back(block_of(r, 0));
    for (int64_t blk = 1; blk < blocks; ++blk)
      for (size_t k = 0; k < row.size(); ++k) v[k] = combine(v[k], block_of(row[k], blk));
    return v;
  };
  // Folds a and b over groups of g lanes: lanes i % g < g/2 get a's elements i and i + g/2
  // combined, the others b's elements i - g/2 and i.
  auto fold = [&](llvm::Value* a, llvm::Value* bv, unsigned g) {
    std::vector<int> kept(lanes), moved(lanes);
    for (unsigned i = 0; i < lanes; ++i) {
      const bool from_a = i % g < g / 2;
      kept[i] = static_cast<int>(from_a ? i : lanes + i);
      moved[i] = static_cast<int>(from_a ? i + g / 2 : lanes + i - g / 2);
    }
    return combine(b_.CreateShuffleVector(a, bv, kept, "rows.kept"), b_.CreateShuffleVector(a, bv, moved, "rows.moved"));
  };
  const std::vector<size_t> leaf_of_lane = tree_leaf_of_lane(lanes);
  llvm::Value* groups = b_.CreateUDiv(rows, i64(lanes));
  parallel_loop_nest({groups}, {out}, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* row0 = b_.CreateMul(idx[0], i64(lanes));
    std::vector<llvm::Value*> row(lanes), level(lanes);
    for (unsigned r = 0; r < lanes; ++r) row[r] = b_.CreateAdd(row0, i64(r));
    const std::vector<llvm::Value*> sums = row_vectors_of(row);
    for (unsigned r = 0; r < lanes; ++r) level[leaf_of_lane[r]] = sums[r];
    for (unsigned g = lanes; g > 1; g /= 2) {
      std::vector<llvm::Value*> next;
      for (size_t p = 0; p + 1 < level.size(); p += 2) next.push_back(fold(level[p], level[p + 1], g));
      level = std::move(next);
    }
    b_.CreateAlignedStore(result(combine(splat_init, level[0])), b_.CreateInBoundsGEP(mem_type(d), out, row0),
                          llvm::Align(dtype_size(d)));
  }, i64(blocks * lanes * lanes), LoopWork::ReducedRows);
  // The rows after the last whole group, each reduced by halves.
  const auto* static_rows = llvm::dyn_cast<llvm::ConstantInt>(rows);
  if (!static_rows || static_rows->getSExtValue() % lanes != 0) {
    llvm::Value* done = b_.CreateMul(groups, i64(lanes));
    loop(b_.CreateSub(rows, done), [&](llvm::Value* k) {
      llvm::Value* r = b_.CreateAdd(done, k);
      llvm::Value* v = row_vectors_of({r})[0];
      for (unsigned n = lanes; n > 1; n /= 2) {
        std::vector<int> low(n / 2), high(n / 2);
        for (unsigned i = 0; i < n / 2; ++i) low[i] = static_cast<int>(i), high[i] = static_cast<int>(i + n / 2);
        v = combine(b_.CreateShuffleVector(v, low, "rows.low"), b_.CreateShuffleVector(v, high, "rows.high"));
      }
      store(d, out, r, result(combine(init, b_.CreateExtractElement(v, uint64_t{0}))));
    });
  }
  emitting_vectors_ = was;
}

// An argmax or argmin over rows of at most two vectors: each row's vectors (NaN lanes and the
// lanes past a partial row's end set to the worst value), the best value by a horizontal maximum
// or minimum, then the first lane equal to it. The answers are the scalar walk's: its first
// occurrence of the best (OEQ: -0 and +0 are equal, the first wins); NaN never compares better,
// so a row that starts with NaN, or holds only NaN, gives 0. As the scalar walk's loop, each row
// was one dependent compare-and-select chain: an argmax over rows of 10 to 32 floats ran
// 1.1-1.2x a plain scalar loop (docs/jit.md).
bool Emitter::arg_reduce_rows(Scope& s, uint32_t i, const Walk& w, llvm::Value* dst) {
  const Node& n = s.graph().nodes[i];
  const ValueId x = n.inputs[0];
  const DType d = s.type(x).dtype;
  if (!rows_fit_vectors(s, x, w, d)) return false;
  const bool is_max = n.op == OpKind::ArgMax;
  const int64_t lanes = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  const int64_t columns = llvm::cast<llvm::ConstantInt>(w.dims[1])->getSExtValue();
  const int64_t blocks = (columns + lanes - 1) / lanes, tail = columns % lanes;
  const auto ulanes = static_cast<unsigned>(lanes);
  llvm::Value* tail_mask = lanes_below(ulanes, tail);
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value* worst = b_.CreateVectorSplat(ulanes, constant(d, is_max ? -inf : inf, 0));
  const RowBlock element = walk_blocks(s, x, w, d);
  const bool was = emitting_vectors_;
  emitting_vectors_ = true;
  parallel_loop_nest({w.dims[0]}, {dst}, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* r = idx[0];
    // Each block with its NaN lanes (and the lanes past the row) set to the worst value: no NaN
    // is left for the horizontal step, which then needs no NaN rules (a reduction with them
    // was a sequential chain of scalar maxima).
    std::vector<llvm::Value*> v(static_cast<size_t>(blocks));
    llvm::Value* first = nullptr;  // the row's first element, as loaded
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const bool partial = tail_mask && blk + 1 == blocks;
      llvm::Value* loaded = element(r, i64(blk), partial ? tail_mask : nullptr);
      if (blk == 0) first = b_.CreateExtractElement(loaded, uint64_t{0});
      llvm::Value* keep = b_.CreateFCmpORD(loaded, loaded);
      if (partial) keep = b_.CreateAnd(keep, tail_mask);
      v[static_cast<size_t>(blk)] = b_.CreateSelect(keep, loaded, worst, "arg.lanes");
    }
    llvm::Value* best = nullptr;
    {
      const llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
      llvm::FastMathFlags no_nans;
      no_nans.setNoNaNs();
      b_.setFastMathFlags(no_nans);
      llvm::Value* folded = v[0];
      for (size_t blk = 1; blk < v.size(); ++blk)
        folded = is_max ? b_.CreateMaxNum(folded, v[blk]) : b_.CreateMinNum(folded, v[blk]);
      best = is_max ? b_.CreateFPMaxReduce(folded) : b_.CreateFPMinReduce(folded);
    }
    llvm::Value* best_splat = b_.CreateVectorSplat(ulanes, best);
    // The first lane equal to the best: the blocks from the last to the first, so the first wins
    // (a row of NaN, all lanes now the worst value, gives its first).
    llvm::Value* index = i64(0);
    for (int64_t blk = blocks; blk-- > 0;) {
      llvm::Value* equal = b_.CreateFCmpOEQ(v[static_cast<size_t>(blk)], best_splat);
      if (tail_mask && blk + 1 == blocks) equal = b_.CreateAnd(equal, tail_mask);
      llvm::Value* bits = b_.CreateBitCast(equal, b_.getIntNTy(ulanes));
      llvm::Value* lane = b_.CreateZExt(b_.CreateIntrinsic(llvm::Intrinsic::cttz, {bits->getType()}, {bits, b_.getTrue()}),
                                        b_.getInt64Ty());
      index = b_.CreateSelect(b_.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0)),
                              b_.CreateAdd(lane, i64(blk * lanes)), index);
    }
    index = b_.CreateSelect(b_.CreateFCmpUNO(first, first), i64(0), index, "arg.rows");
    store(DType::Int64, dst, r, index);
  }, i64(columns), LoopWork::ReducedRows);
  emitting_vectors_ = was;
  return true;
}

}  // namespace ag::jit
