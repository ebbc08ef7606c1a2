// Reductions split over the thread pool (reduce_parallel.h). Each block or chunk is reduced in
// order by one thread into its own partial, in a heap buffer of the call (on the stack it would
// grow with the operand); the partials are then combined in order.
#include "ag/detail/parallel.h"
#include "reduce_parallel.h"

#include <algorithm>

namespace ag::jit {
namespace {

// The eager full reduction's chunk (runtime/src/ops/isa/reduce.cpp): compiled code splits at the
// same boundaries, so the two sum in the same chunks.
constexpr int64_t kReduceChunk = detail::kFullReductionChunk;
// A split column reduction uses at most this many blocks of rows (each one partial row).
constexpr int64_t kMaxRowBlocks = 8;

// Piece `index` of [0, total) cut into pieces of `size`: its first position and its length (the
// last piece may be short).
struct Piece {
  llvm::Value* begin;
  llvm::Value* length;
};
Piece piece(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* size, llvm::Value* total) {
  llvm::Value* begin = b.CreateMul(index, size);
  llvm::Value* left = b.CreateSub(total, begin);
  return {begin, b.CreateSelect(b.CreateICmpSLT(left, size), left, size)};
}

llvm::Value* smin(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) { return b.CreateSelect(b.CreateICmpSLT(x, y), x, y); }

class ParallelReduction {
 public:
  ParallelReduction(Emitter& e, const ReductionSite& r) : e_(e), r_(r), b_(e.b()) {}

  // A full reduction whose walk is one contiguous dim of two chunks or more: each chunk of
  // kReduceChunk elements is reduced in order, in a register, by one thread of the pool into
  // its partial, then the partials are combined in chunk order (docs/jit.md, "Threads"). A size
  // known only at run time takes this path when it is large and `serial` otherwise.
  bool full(llvm::Value* acc, const std::function<void()>& serial) {
    const Walk& w = r_.w;
    if (w.dims.size() >= 2) return full_by_rows(acc, serial);
    if (w.dims.size() != 1) return false;
    llvm::Value* total = w.dims[0];
    auto* size = llvm::dyn_cast<llvm::ConstantInt>(total);
    if (size && size->getSExtValue() < 2 * kReduceChunk) return false;
    auto chunked = [&] {
      llvm::Value* chunks = b_.CreateSDiv(b_.CreateAdd(total, i64(kReduceChunk - 1)), i64(kReduceChunk));
      partials(chunks, i64(kReduceChunk), acc, [&](llvm::Value* c) {
        const Piece chunk = piece(b_, c, i64(kReduceChunk), total);
        return e_.loop_reduce(chunk.length, r_.init, [&](llvm::Value* a, llvm::Value* j) {
          return r_.combine(a, e_.eval_element(r_.s, r_.x, w, {b_.CreateAdd(chunk.begin, j)}));
        });
      });
    };
    if (size) chunked();
    else e_.if_else(b_.CreateICmpSGE(total, i64(2 * kReduceChunk)), chunked, serial);
    return true;
  }

  // A column reduction of a 2-D walk whose outer dim is reduced: the rows are cut into a fixed
  // number of blocks (from the shape alone, at most kMaxRowBlocks, each of at least kReduceChunk
  // elements); each block is reduced row after row into its own partial row by one thread of
  // the pool, reading the operand in memory order; the partial rows are then combined in block
  // order. Cutting the columns instead keeps each column's order but reads each row in pieces,
  // slower on one thread than the serial walk (docs/performance.md, "Measured decisions":
  // column reduction). Sizes known only at run time take this path when there are two blocks or
  // more, and `serial` otherwise.
  bool columns(const LVal& acc_view, const std::function<void()>& serial) {
    const Walk& w = r_.w;
    const DType d = r_.d;
    if (w.dims.size() != 2) return false;
    const std::vector<llvm::Value*>& out_strides = *w.find(&acc_view);
    // Rows reduced, columns kept (a kept dim of unknown size has the stride `size == 1 ? 0 : 1`,
    // which differs from 1 only when there is one column).
    if (!e_.is_const(out_strides[0], 0) || e_.is_const(out_strides[1], 0)) return false;
    llvm::Value* r = w.dims[0];
    llvm::Value* c = w.dims[1];
    llvm::Value* blocks = smin(b_, smin(b_, i64(kMaxRowBlocks), r), b_.CreateSDiv(b_.CreateMul(r, c), i64(kReduceChunk)));
    auto* static_blocks = llvm::dyn_cast<llvm::ConstantInt>(blocks);
    if (static_blocks && static_blocks->getSExtValue() < 2) return false;
    const bool vectors = e_.column_vectors_fit(r_.s, r_.x, w, acc_view, d);
    auto blocked = [&] {
      llvm::Value* rows_per_block = b_.CreateSDiv(b_.CreateAdd(r, b_.CreateSub(blocks, i64(1))), blocks);
      const std::vector<llvm::Value*> partial_dims{blocks, c};
      llvm::Value* partial_rows = e_.owned_alloc(
          b_.CreateMul(b_.CreateMul(blocks, c), i64(static_cast<int64_t>(dtype_size(d)))), r_.s.site({r_.i, 0}, partial_dims));
      e_.splittable_loop_nest(
          {blocks}, {partial_rows},
          [&](const std::vector<llvm::Value*>& idx) {
            const Piece rows_of_block = piece(b_, idx[0], rows_per_block, r);
            llvm::Value* part = b_.CreateMul(idx[0], c);
            if (vectors) {  // the block's columns in vector registers (Emitter::column_reduction_vector)
              e_.column_reduction_vector(r_.s, r_.x, w, d, r_.init, r_.combine, rows_of_block.begin, rows_of_block.length,
                                         b_.CreateInBoundsGEP(e_.mem_type(d), partial_rows, part));
              return;
            }
            e_.loop(c, [&](llvm::Value* j) { e_.store(d, partial_rows, b_.CreateAdd(part, j), r_.init); });
            e_.loop(rows_of_block.length, [&](llvm::Value* k) {
              llvm::Value* row = b_.CreateAdd(rows_of_block.begin, k);
              e_.loop(c, [&](llvm::Value* j) {
                llvm::Value* at = b_.CreateAdd(part, j);
                e_.store(d, partial_rows, at,
                         r_.combine(e_.load(d, partial_rows, at), e_.eval_element(r_.s, r_.x, w, {row, j})));
              });
            });
          },
          /*work_per_outer=*/b_.CreateMul(rows_per_block, c));
      e_.loop(c, [&](llvm::Value* j) {
        llvm::Value* off = b_.CreateMul(j, out_strides[1]);
        llvm::Value* v = e_.loop_reduce(blocks, e_.load(d, acc_view.ptr, off), [&](llvm::Value* a, llvm::Value* blk) {
          return r_.combine(a, e_.load(d, partial_rows, b_.CreateAdd(b_.CreateMul(blk, c), j)));
        });
        e_.store(d, acc_view.ptr, off, v);
      });
      e_.owned_free(partial_rows);
    };
    if (static_blocks) blocked();
    else e_.if_else(b_.CreateICmpSGE(blocks, i64(2)), blocked, serial);
    return true;
  }

 private:
  llvm::Value* i64(int64_t v) { return e_.i64(v); }

  // A full reduction whose walk kept several dims: unknown sizes, which make_walk does not merge
  // (a dim may turn out to be 1 and broadcast). Its rows are cut into a fixed number of blocks
  // (from the shape alone, as a column reduction's), each reduced in row-major order by one
  // thread into its partial, the partials combined in block order. Small at run time (fewer than
  // two blocks of kReduceChunk elements): `serial`. A static walk of several dims (a broadcast
  // operand) stays serial: false.
  bool full_by_rows(llvm::Value* acc, const std::function<void()>& serial) {
    const Walk& w = r_.w;
    if (std::all_of(w.dims.begin(), w.dims.end(), [](llvm::Value* v) { return llvm::isa<llvm::ConstantInt>(v); })) return false;
    llvm::Value* r = w.dims[0];
    llvm::Value* row_elements = e_.numel(std::vector<llvm::Value*>(w.dims.begin() + 1, w.dims.end()));
    llvm::Value* blocks =
        smin(b_, smin(b_, i64(kMaxRowBlocks), r), b_.CreateSDiv(b_.CreateMul(r, row_elements), i64(kReduceChunk)));
    auto blocked = [&] {
      llvm::Value* rows_per_block = b_.CreateSDiv(b_.CreateAdd(r, b_.CreateSub(blocks, i64(1))), blocks);
      partials(blocks, b_.CreateMul(rows_per_block, row_elements), acc, [&](llvm::Value* blk) {
        const Piece rows_of_block = piece(b_, blk, rows_per_block, r);
        std::vector<llvm::Value*> at(w.dims.size());
        std::function<llvm::Value*(size_t, llvm::Value*)> level = [&](size_t k, llvm::Value* a) -> llvm::Value* {
          if (k == w.dims.size()) return r_.combine(a, e_.eval_element(r_.s, r_.x, w, at));
          llvm::Value* n = k == 0 ? rows_of_block.length : w.dims[k];
          return e_.loop_reduce(n, a, [&](llvm::Value* a_k, llvm::Value* j) {
            at[k] = k == 0 ? b_.CreateAdd(rows_of_block.begin, j) : j;
            return level(k + 1, a_k);
          });
        };
        return level(0, r_.init);
      });
    };
    e_.if_else(b_.CreateICmpSGE(blocks, i64(2)), blocked, serial);
    return true;
  }

  // `count` partials, partial p computed by `partial(p)` on the pool (each of about `work`
  // elements, for the pool's grain), then combined in order into acc[0].
  void partials(llvm::Value* count, llvm::Value* work, llvm::Value* acc,
                const std::function<llvm::Value*(llvm::Value*)>& partial) {
    const DType d = r_.d;
    const std::vector<llvm::Value*> partial_dims{count};
    llvm::Value* buffer =
        e_.owned_alloc(b_.CreateMul(count, i64(static_cast<int64_t>(dtype_size(d)))), r_.s.site({r_.i, 0}, partial_dims));
    e_.splittable_loop_nest(
        {count}, {buffer}, [&](const std::vector<llvm::Value*>& idx) { e_.store(d, buffer, idx[0], partial(idx[0])); }, work);
    e_.store(d, acc, i64(0), e_.loop_reduce(count, r_.init, [&](llvm::Value* a, llvm::Value* c) {
      return r_.combine(a, e_.load(d, buffer, c));
    }));
    e_.owned_free(buffer);
  }

  Emitter& e_;
  const ReductionSite& r_;
  llvm::IRBuilder<>& b_;
};

}  // namespace

bool lower_parallel_full_reduction(Emitter& e, const ReductionSite& r, llvm::Value* acc,
                                   const std::function<void()>& serial) {
  return ParallelReduction(e, r).full(acc, serial);
}

bool lower_parallel_column_reduction(Emitter& e, const ReductionSite& r, const LVal& acc_view,
                                     const std::function<void()>& serial) {
  return ParallelReduction(e, r).columns(acc_view, serial);
}

}  // namespace ag::jit
