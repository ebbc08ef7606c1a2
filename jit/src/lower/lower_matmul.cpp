// Matrix multiplication, batched over broadcast leading dims (index arithmetic, no copies). Small
// static shapes call an internal kernel per shape, register-blocked vector code emitted here (a
// 10x10 product costs a direct call and no dispatch), and a chain of them r = matmul(x, r) is one
// loop over that kernel; large or dynamic shapes call the runtime's Eigen GEMM.
#include "emitter.h"
#include "../matmul_forms.h"
#include "../optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace ag::jit {
namespace {

// Independent float accumulators a block wants: a float FMA's latency (4 cycles) times its
// throughput (2 per cycle).
constexpr int64_t kFmaChains = 8;
// Chains of this many products or more are emitted as a loop (lower_matmul_chain).
constexpr int64_t kMinMatMulChain = 8;
// A row block's k steps: straight code up to kStraightK of them, else a loop of kLoopKStep steps
// per iteration, its accumulators carried in registers (the same sums in the same order). RNN
// decode's 1 x 64 x 64 kernel, 64 steps of 4 FMAs straight, took 30-38 ms to compile as the
// second module of a cold first call, longer than the entry it ran beside.
constexpr int64_t kStraightK = 16;
constexpr int64_t kLoopKStep = 8;

const char* gemm_name(DType d) {
  switch (d) {
    case DType::Float32: return "agc_rt_gemm_f32";
    case DType::Float64: return "agc_rt_gemm_f64";
    case DType::Int32: return "agc_rt_gemm_i32";
    default: return "agc_rt_gemm_i64";
  }
}

int64_t const_value(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
  return c ? c->getSExtValue() : -1;
}

}  // namespace

// An internal function of `pointers` noalias pointer arguments with an empty entry block, for a
// small matmul kernel. Never inlined: inlined into a chain's loop the packed kernel ran no
// faster, and the optimizer's loop passes took longer
// (docs/performance.md, "Measured decisions": kernel not inlined).
// Compiled for size: its rows are already whole vectors and k is unrolled or a loop of its own,
// and unrolling its loops further only grows the code generator's work, not the kernel's speed
// (docs/performance.md, "Measured decisions": kernel for size).
llvm::Function* Emitter::matmul_kernel(const std::string& name, unsigned pointers) {
  const std::vector<llvm::Type*> params(pointers, b_.getPtrTy());
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  llvm::Function* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, module_);
  for (unsigned a = 0; a < pointers; ++a) f->addParamAttr(a, llvm::Attribute::NoAlias);
  f->addFnAttr(llvm::Attribute::NoInline);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr(llvm::Attribute::OptimizeForSize);
  mark_emitted_optimized(*f);
  llvm::BasicBlock::Create(ctx_ref_, "entry", f);
  return f;
}

namespace {

// The body of one small GEMM kernel, C[m,n] = A[m,k] * B[k,n] for static sizes, emitted into its
// function's entry block (Emitter::small_gemm). With k small enough to unroll, rows of C are
// computed in blocks of whole vectors held in registers (vector_rows); otherwise a plain
// triple loop (scalar_rows).
class SmallGemm {
 public:
  SmallGemm(Emitter& e, llvm::Function* f, DType d, int64_t m, int64_t k, int64_t n, int vector_bytes)
      : e_(e), b_(e.b()), d_(d), m_(m), k_(k), n_(n), fp_(is_floating(d)), et_(e.mem_type(d)), align_(dtype_size(d)),
        lanes_(std::max<int64_t>(1, vector_bytes / static_cast<int64_t>(dtype_size(d)))), vector_bytes_(vector_bytes),
        pa_(f->getArg(0)), pb_(f->getArg(1)), pc_(f->getArg(2)),
        // On AVX-512 a row's last, partial piece is a whole register under a constant mask
        // (masked loads and stores are plain instructions there): a <10 x i32> had the code
        // generator widen every operation, a sizable share of W1's kernel's codegen. AVX2's
        // masked moves are slow, so there the piece keeps its width (docs/performance.md,
        // "Measured decisions": masked pieces).
        masked_(vector_bytes == 64) {}

  void emit() {
    if (k_ <= kUnrolledKMax) vector_rows();
    else scalar_rows();
  }

 private:
  // A panel of C's columns, cut into pieces of at most one register: (first column, width).
  using Pieces = std::vector<std::pair<int64_t, unsigned>>;

  // A row of C is a few LLVM vectors ("pieces"): C[i,j0:j1] = sum_k A[i,k] * B[k,j0:j1], each
  // piece at most one of the target's registers wide (a 10-column int32 row: one 16-lane vector
  // on AVX-512, 8 + 2 lanes on AVX2). One <10 x i32> left to the backend on AVX2 became
  // element-by-element inserts and spills; left to itself, the vectorizer turned these short
  // loops into gathers (docs/performance.md, "Measured decisions": register-wide pieces).
  // Rows wider than kVectorRowMax go in panels of kVectorRowMax columns (a loop over panels),
  // so that a block's accumulators still fit the registers: the kernel is marked as emitted
  // optimized, and the scalar loop it replaces stayed scalar (vmovss/vfmadd213ss).
  //
  // Rows go in blocks whose accumulators all stay in registers: for each k, B's row k is loaded
  // once and multiplied into every row of the block. One row at a time, a float row's sum over
  // k was one chain of dependent FMAs per piece, bound by the FMA's latency, and B's rows were
  // copied to the stack on every call (docs/performance.md, "Measured decisions": row blocks).
  // Each element is still summed over k in order, so the values do not change.
  void vector_rows() {
    const int64_t panel = panel_width();
    const Pieces pieces = pieces_of(panel);
    const int64_t block_rows = rows_per_block(static_cast<int64_t>(pieces.size()));
    const int64_t full_panels = n_ / panel, rest = n_ % panel;
    if (full_panels == 1) {
      panel_rows(e_.i64(0), pieces, block_rows);
    } else {
      e_.loop_carry(
          e_.i64(full_panels), {},
          [&](const std::vector<llvm::Value*>&, llvm::Value* p) {
            panel_rows(b_.CreateMul(p, e_.i64(panel)), pieces, block_rows);
            return std::vector<llvm::Value*>{};
          },
          "gemm.cols", /*rolled=*/true);
    }
    if (rest) {
      const Pieces last = pieces_of(rest);
      panel_rows(e_.i64(full_panels * panel), last, rows_per_block(static_cast<int64_t>(last.size())));
    }
    b_.CreateRetVoid();
  }

  // kVectorRowMax columns, or wider where C has too few rows for the FMA chains rows_per_block
  // wants (a GEMV, 1 x 64 x 64 in RNN decode: two accumulators per 32-column panel, each k a
  // 4-cycle dependent FMA, took a quarter of the program's time): each doubling gives every k
  // more independent pieces, as long as they and B's row still fit the registers.
  int64_t panel_width() const {
    int64_t panel = std::min(n_, kVectorRowMax);
    if (!fp_) return panel;
    const int64_t registers = vector_bytes_ == 64 ? 32 : 16;
    auto count = [&](int64_t width) { return static_cast<int64_t>(pieces_of(width).size()); };
    while (panel < n_ && m_ * count(panel) < kFmaChains) {
      const int64_t wider = std::min(n_, 2 * panel);
      if (2 * count(wider) + 2 > registers) break;  // accumulators and B's pieces, a broadcast, a spare
      panel = wider;
    }
    return panel;
  }

  Pieces pieces_of(int64_t width) const {
    Pieces pieces;
    for (int64_t j0 = 0; j0 < width; j0 += lanes_) pieces.emplace_back(j0, static_cast<unsigned>(std::min(lanes_, width - j0)));
    return pieces;
  }

  // Enough independent accumulators to cover a float FMA's latency (4 cycles, 2 per cycle), and
  // no more: a block is unrolled, and a larger one only makes more code to compile, not faster
  // code. Integer adds take a cycle: one row per block, which still loads B's row k once per k
  // and ran W1 on AVX2 (x86-64-v3) faster than the previous row loop (docs/performance.md,
  // "Measured decisions": row block size).
  int64_t rows_per_block(int64_t np) const {
    const int64_t registers = vector_bytes_ == 64 ? 32 : 16;
    const int64_t chains = fp_ ? kFmaChains : 1;
    const int64_t by_registers = std::max<int64_t>(1, (registers - np - 2) / np);  // + B's pieces, a broadcast, a spare
    return std::clamp<int64_t>((chains + np - 1) / np, 1, std::max<int64_t>(1, std::min(by_registers, m_)));
  }

  // All rows of C for the panel of columns starting at `col0`. The blocks stay a loop: a block is
  // already hundreds of instructions (k unrolled, or 8 steps of it), which LLVM's unrollers never
  // copy, but they analyzed it twice, each time simulating every iteration, which took much of the
  // optimizer's time (docs/performance.md, "Measured decisions": rolled row blocks).
  void panel_rows(llvm::Value* col0, const Pieces& pieces, int64_t block_rows) {
    const int64_t full_blocks = m_ / block_rows, rest = m_ % block_rows;
    e_.loop_carry(
        e_.i64(full_blocks), {},
        [&](const std::vector<llvm::Value*>&, llvm::Value* blk) {
          row_block(b_.CreateMul(blk, e_.i64(block_rows)), block_rows, col0, pieces);
          return std::vector<llvm::Value*>{};
        },
        "gemm.rows", /*rolled=*/true);
    if (rest) row_block(e_.i64(full_blocks * block_rows), rest, col0, pieces);
  }

  llvm::FixedVectorType* vtype(unsigned width) const {
    return llvm::FixedVectorType::get(et_, masked_ && width < lanes_ ? static_cast<unsigned>(lanes_) : width);
  }
  llvm::Constant* mask_of(unsigned width) {
    std::vector<llvm::Constant*> bits;
    for (int64_t l = 0; l < lanes_; ++l) bits.push_back(b_.getInt1(l < width));
    return llvm::ConstantVector::get(bits);
  }
  llvm::Value* load_piece(llvm::Value* ptr, unsigned width) {
    if (masked_ && width < lanes_)
      return b_.CreateMaskedLoad(vtype(width), ptr, align_, mask_of(width), llvm::Constant::getNullValue(vtype(width)));
    return b_.CreateAlignedLoad(vtype(width), ptr, align_);
  }
  void store_piece(llvm::Value* v, llvm::Value* ptr, unsigned width) {
    if (masked_ && width < lanes_) b_.CreateMaskedStore(v, ptr, align_, mask_of(width));
    else b_.CreateAlignedStore(v, ptr, align_);
  }

  // `rows` rows of C from `row0`, the panel's columns from `col0`. The block is straight code of
  // rows * pieces multiply-adds per step of k (up to kStraightK steps, else a loop of kLoopKStep
  // of them), so each instruction less per product is hundreds less for LLVM to optimize and
  // compile: a row of A is addressed once (an offset per k), and A[i,k] is broadcast once per
  // vector width, not per piece.
  void row_block(llvm::Value* row0, int64_t rows, llvm::Value* col0, const Pieces& pieces) {
    const auto np = static_cast<int64_t>(pieces.size());
    llvm::Value* bcol = b_.CreateInBoundsGEP(et_, pb_, col0);
    llvm::Value* ccol = b_.CreateInBoundsGEP(et_, pc_, col0);
    std::vector<llvm::Value*> acc, arow;
    for (int64_t r = 0; r < rows; ++r) {
      arow.push_back(b_.CreateInBoundsGEP(et_, pa_, b_.CreateMul(b_.CreateAdd(row0, e_.i64(r)), e_.i64(k_))));
      for (const auto& [j0, width] : pieces) acc.push_back(llvm::Constant::getNullValue(vtype(width)));
    }
    // k step kk (a constant, or a value in the k loop) into the accumulators.
    auto step = [&](llvm::Value* kk) {
      std::vector<llvm::Value*> brow;
      for (const auto& [j0, width] : pieces)
        brow.push_back(load_piece(b_.CreateInBoundsGEP(et_, bcol, b_.CreateAdd(b_.CreateMul(kk, e_.i64(n_)), e_.i64(j0))), width));
      for (int64_t r = 0; r < rows; ++r) {
        llvm::Value* aik = e_.load(d_, arow[static_cast<size_t>(r)], kk);
        std::map<unsigned, llvm::Value*> splats;  // by vector width
        for (int64_t p = 0; p < np; ++p) {
          const unsigned lanes_p = vtype(pieces[static_cast<size_t>(p)].second)->getNumElements();
          llvm::Value*& a = splats[lanes_p];
          if (!a) a = b_.CreateVectorSplat(lanes_p, aik);
          llvm::Value*& c = acc[static_cast<size_t>(r * np + p)];
          c = fp_ ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {c->getType()}, {a, brow[static_cast<size_t>(p)], c})
                  : b_.CreateAdd(c, b_.CreateMul(a, brow[static_cast<size_t>(p)]));
        }
      }
    };
    const int64_t looped = k_ > kStraightK ? k_ / kLoopKStep : 0;
    if (looped > 0) {
      const std::vector<llvm::Value*> init = acc;  // `step` changes acc in the loop body
      acc = e_.loop_carry(
          e_.i64(looped), init,
          [&](const std::vector<llvm::Value*>& carried, llvm::Value* it) {
            acc = carried;
            for (int64_t kk = 0; kk < kLoopKStep; ++kk) step(b_.CreateAdd(b_.CreateMul(it, e_.i64(kLoopKStep)), e_.i64(kk)));
            return acc;
          },
          "gemm.k", /*rolled=*/true);
    }
    for (int64_t kk = looped * kLoopKStep; kk < k_; ++kk) step(e_.i64(kk));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < np; ++p) {
        llvm::Value* at = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(row0, e_.i64(r)), e_.i64(n_)),
                                       e_.i64(pieces[static_cast<size_t>(p)].first));
        store_piece(acc[static_cast<size_t>(r * np + p)], b_.CreateInBoundsGEP(et_, ccol, at), pieces[static_cast<size_t>(p)].second);
      }
  }

  // k too large to unroll: C row by row, each element summed over k in order.
  void scalar_rows() {
    e_.loop(e_.i64(m_), [&](llvm::Value* r) {
      llvm::Value* crow = b_.CreateMul(r, e_.i64(n_));
      e_.loop(e_.i64(n_), [&](llvm::Value* j) { e_.store(d_, pc_, b_.CreateAdd(crow, j), e_.constant(d_, 0, 0)); });
      e_.loop(e_.i64(k_), [&](llvm::Value* kk) {
        llvm::Value* aik = e_.load(d_, pa_, b_.CreateAdd(b_.CreateMul(r, e_.i64(k_)), kk));
        llvm::Value* brow = b_.CreateMul(kk, e_.i64(n_));
        e_.loop(e_.i64(n_), [&](llvm::Value* j) {
          llvm::Value* at = b_.CreateAdd(crow, j);
          llvm::Value* bkj = e_.load(d_, pb_, b_.CreateAdd(brow, j));
          llvm::Value* acc = e_.load(d_, pc_, at);
          llvm::Value* sum = fp_ ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {aik->getType()}, {aik, bkj, acc})
                                 : b_.CreateAdd(acc, b_.CreateMul(aik, bkj));
          e_.store(d_, pc_, at, sum);
        });
      });
    });
    b_.CreateRetVoid();
  }

  Emitter& e_;
  llvm::IRBuilder<>& b_;
  const DType d_;
  const int64_t m_, k_, n_;
  const bool fp_;
  llvm::Type* const et_;
  const llvm::Align align_;
  const int64_t lanes_;
  const int vector_bytes_;
  llvm::Value* const pa_;
  llvm::Value* const pb_;
  llvm::Value* const pc_;
  const bool masked_;
};

}  // namespace

// C[m,n] = A[m,k] * B[k,n] for one static shape, as an internal function: a chain of 100
// products calls it 100 times (a direct call, no dispatch).
llvm::Function* Emitter::small_gemm(DType d, int64_t m, int64_t k, int64_t n) {
  const std::string name = fmt::format("agc.gemm.{}.{}x{}x{}", dtype_short_name(d), m, k, n);
  if (llvm::Function* f = module_.getFunction(name)) return f;
  llvm::Function* f = matmul_kernel(name, 3);
  const llvm::IRBuilderBase::InsertPointGuard guard(b_);
  b_.SetInsertPoint(&f->getEntryBlock());
  b_.SetCurrentDebugLocation(llvm::DebugLoc());  // node locations belong to the entry function
  SmallGemm(*this, f, d, m, k, n, vector_bytes_).emit();
  return f;
}

// A chain `r = matmul(x, r)` (or `matmul(r, x)`) repeated from node i, as the TF guide's
// `power` unrolls at trace time: consecutive 2-D products of one small static kernel, x the same
// value in the same position, each product used only by the next. Its length, or 0 below
// kMinMatMulChain (lower_matmul_chain emits it as a loop).
int64_t Emitter::matmul_chain_length(const Scope& s, uint32_t i) const {
  const Graph& g = s.graph();
  const Node& first = g.nodes[i];
  if (first.op != OpKind::MatMul || first.inputs.size() != 2 || !first.attrs.ints.empty()) return 0;
  const TensorType& t = first.outputs[0];
  if (t.shape.rank() != 2 || !t.shape.is_fully_defined() || s.type(first.inputs[0]).shape.rank() != 2) return 0;
  const int64_t m = s.type(first.inputs[0]).shape[0], k = s.type(first.inputs[0]).shape[1], n = t.shape[1];
  if (k < 0 || !matmul_inline(m, k, n)) return 0;
  // The position of the chained operand, from the second product.
  if (i + 1 >= g.nodes.size()) return 0;
  const Node& second = g.nodes[i + 1];
  const ValueId prev{i, 0};
  int pos = -1;
  if (second.op == OpKind::MatMul && second.inputs.size() == 2)
    pos = second.inputs[1] == prev ? 1 : second.inputs[0] == prev ? 0 : -1;
  if (pos < 0) return 0;
  const ValueId x = first.inputs[1 - pos];
  uint32_t end = i + 1;
  while (end < g.nodes.size()) {
    const Node& n_j = g.nodes[end];
    const ValueId r{end - 1, 0};
    if (n_j.op != OpKind::MatMul || n_j.inputs.size() != 2 || n_j.inputs[pos] != r || n_j.inputs[1 - pos] != x ||
        n_j.outputs[0] != t || !n_j.attrs.ints.empty())
      break;
    // The product it consumes lives only for it: no other use, not a result, a plain buffer.
    const ValuePlan& vp = s.plan->at(r);
    if (end - 1 > i && (vp.storage != ValueStorage::Arena || vp.last_use != static_cast<int32_t>(end))) break;
    ++end;
  }
  const int64_t length = end - i;
  return length >= kMinMatMulChain ? length : 0;
}

// The chain's products i .. i + length - 1 as one loop with one call of the kernel. The first
// product writes node i's buffer (it may have other uses), the last node last's, the middle ones
// two stack buffers in turn instead of their planned buffers: the plan gives each product a
// buffer for its own lifetime, and a loop needs the same two every time. The same products as
// straight-line calls, in the same order: W1's 100 products compile as one call, in less time
// (docs/performance.md, "Measured decisions": matmul chain loop).
//
// With x on the left and rows that leave vector lanes empty, x is packed once and the products
// run the packed kernel (lower_matmul_packed.cpp).
void Emitter::lower_matmul_chain(Scope& s, uint32_t i, int64_t length) {
  const Graph& g = s.graph();
  const uint32_t last = i + static_cast<uint32_t>(length) - 1;
  const Node& first = g.nodes[i];
  const int pos = g.nodes[i + 1].inputs[1] == ValueId{i, 0} ? 1 : 0;
  const LVal x = as_buffer(s.at(first.inputs[1 - pos]));
  const LVal r0 = as_buffer(s.at(first.inputs[pos]));
  const TensorType& t = first.outputs[0];
  const int64_t m = t.shape[0], n = t.shape[1], k = s.type(first.inputs[0]).shape[1];
  // The chain's kernel is static: only the first product's chained operand can differ.
  const LVal& a0 = pos == 1 ? x : r0;
  const LVal& b0 = pos == 1 ? r0 : x;
  fail_if(b_.CreateICmpNE(a0.dims[1], b0.dims[0]), s.node_id(i), FailKind::MatMulInner, a0.dims[1], b0.dims[0]);

  LVal out;
  out.dtype = t.dtype;
  out.dims = static_dims(t.shape);
  llvm::Value* first_out = result_buffer(s, i, out.dims);
  at_node(s.node_id(last));
  llvm::Value* last_out = result_buffer(s, last, out.dims);
  at_node(s.node_id(i));
  const int64_t bytes = t.shape.num_elements() * static_cast<int64_t>(dtype_size(t.dtype));
  llvm::Value* buffers[2] = {stack_alloc(bytes), stack_alloc(bytes)};

  const std::optional<GemmPacking> packing = pos == 1 ? gemm_packing(t.dtype, m, k, n) : std::nullopt;
  llvm::Value* packed = packing ? pack_gemm_lhs(*packing, t.dtype, m, k, x.ptr) : nullptr;
  llvm::Function* kernel = packing ? small_gemm_packed(*packing, t.dtype, m, k, n) : small_gemm(t.dtype, m, k, n);
  loop_carry(
      i64(length), {r0.ptr},
      [&](const std::vector<llvm::Value*>& src, llvm::Value* j) {
        llvm::Value* middle = b_.CreateSelect(b_.CreateICmpEQ(b_.CreateAnd(j, i64(1)), i64(0)), buffers[0], buffers[1]);
        llvm::Value* dst = b_.CreateSelect(b_.CreateICmpEQ(j, i64(0)), first_out,
                                           b_.CreateSelect(b_.CreateICmpEQ(j, i64(length - 1)), last_out, middle));
        if (packing) b_.CreateCall(kernel, {x.ptr, packed, src[0], dst});
        else
          b_.CreateCall(kernel, pos == 1 ? std::vector<llvm::Value*>{x.ptr, src[0], dst}
                                         : std::vector<llvm::Value*>{src[0], x.ptr, dst});
        return std::vector<llvm::Value*>{dst};
      },
      "chain", /*rolled=*/true);  // one call in a loop, not 100 unrolled
  finish_result(s, i, out, first_out);
  finish_result(s, last, out, last_out);
}

// dst[c, r] = src[r, c] for a static [rows, cols] src; returns dst.
llvm::Value* Emitter::transpose_into(DType d, llvm::Value* src, llvm::Value* dst, int64_t rows, int64_t cols) {
  loop_nest({i64(rows), i64(cols)}, [&](const std::vector<llvm::Value*>& rc) {
    llvm::Value* v = load(d, src, b_.CreateAdd(b_.CreateMul(rc[0], i64(cols)), rc[1]));
    store(d, dst, b_.CreateAdd(b_.CreateMul(rc[1], i64(rows)), rc[0]), v);
  });
  return dst;
}

void Emitter::lower_matmul(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const LVal a = as_buffer(s.at(n.inputs[0]));
  const LVal bm = as_buffer(s.at(n.inputs[1]));
  const TensorType& t = n.outputs[0];
  const DType d = t.dtype;
  const size_t ra = a.dims.size(), rb = bm.dims.size();
  const bool ta = n.attrs.transpose_a(), tb = n.attrs.transpose_b();
  llvm::Value* m = a.dims[ra - (ta ? 1 : 2)];
  llvm::Value* k = a.dims[ra - (ta ? 2 : 1)];
  llvm::Value* nn = bm.dims[rb - (tb ? 2 : 1)];
  llvm::Value* kb = bm.dims[rb - (tb ? 1 : 2)];
  fail_if(b_.CreateICmpNE(k, kb), s.node_id(i), FailKind::MatMulInner, k, kb);

  LVal a_batch, b_batch, o_batch;
  a_batch.dims.assign(a.dims.begin(), a.dims.end() - 2);
  b_batch.dims.assign(bm.dims.begin(), bm.dims.end() - 2);
  o_batch.dims = broadcast_lists({&a_batch.dims, &b_batch.dims}, Shape(t.shape.begin(), t.shape.end() - 2), s.node_id(i));
  LVal out;
  out.dtype = d;
  out.dims = o_batch.dims;
  out.dims.push_back(m);
  out.dims.push_back(nn);
  llvm::Value* c = result_buffer(s, i, out.dims);

  const int64_t cm = const_value(m), ck = const_value(k), cn = const_value(nn);
  const bool inline_loops = cm >= 0 && ck >= 0 && cn >= 0 && matmul_inline(cm, ck, cn);
  if (!inline_loops && ra == 2 && rb == 2 && lower_matvec(s, i, a, bm, c)) {
    finish_result(s, i, out, c);
    return;
  }
  llvm::Value* mk = b_.CreateMul(m, k);
  llvm::Value* kn = b_.CreateMul(k, nn);
  llvm::Value* mn = b_.CreateMul(m, nn);
  llvm::Type* et = mem_type(d);
  // The small kernels read row-major operands: a transposed one is copied into a stack buffer
  // first (at most kInlineMatMulWork elements; GEMM reads it in place).
  llvm::Value* a_rows = inline_loops && ta ? stack_alloc(cm * ck * static_cast<int64_t>(dtype_size(d))) : nullptr;
  llvm::Value* b_rows = inline_loops && tb ? stack_alloc(ck * cn * static_cast<int64_t>(dtype_size(d))) : nullptr;
  const Walk w = make_walk(o_batch.dims, {&a_batch, &b_batch, &o_batch}, /*collapse=*/true);
  loop_nest(w.dims, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* pa = b_.CreateInBoundsGEP(et, a.ptr, b_.CreateMul(linear_offset(*w.find(&a_batch), idx), mk));
    llvm::Value* pb = b_.CreateInBoundsGEP(et, bm.ptr, b_.CreateMul(linear_offset(*w.find(&b_batch), idx), kn));
    llvm::Value* pc = b_.CreateInBoundsGEP(et, c, b_.CreateMul(linear_offset(*w.find(&o_batch), idx), mn));
    if (!inline_loops) {
      llvm::Value* transposes = i64((ta ? 1 : 0) | (tb ? 2 : 0));
      const auto packed = std::find_if(s.packed_b.begin(), s.packed_b.end(), [&](const auto& p) { return p.first == i; });
      if (packed != s.packed_b.end())
        b_.CreateCall(runtime(d == DType::Float64 ? "agc_rt_gemm_packed_b_f64" : "agc_rt_gemm_packed_b_f32"),
                      {pa, pb, packed->second, pc, m, k, nn, transposes});
      else
        b_.CreateCall(runtime(gemm_name(d)), {pa, pb, pc, m, k, nn, transposes});
      return;
    }
    if (a_rows) pa = transpose_into(d, pa, a_rows, ck, cm);
    if (b_rows) pb = transpose_into(d, pb, b_rows, cn, ck);
    b_.CreateCall(small_gemm(d, cm, ck, cn), {pa, pb, pc});
  });
  finish_result(s, i, out, c);
}

}  // namespace ag::jit
