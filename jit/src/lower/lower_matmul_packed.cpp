// Small products whose rows do not fill the target's vectors, with the left operand packed once
// for a chain of them (Emitter::lower_matmul_chain, `r = matmul(x, r)`).
//
// A 10-column int32 row fills 10 of AVX-512's 16 lanes: the row kernel (small_gemm) spends 100
// vector multiplies on a 10x10x10 product whose 1000 multiply-adds need 63. Here the columns are
// cut into power-of-two segments (10 = 8 + 2) and each vector holds `rows_per_vector` rows of
// one segment: lane l is C[v * R + l / w, j0 + l % w]. Its B operand is B[k, j0 : j0 + w]
// broadcast R times (one broadcast load per k), its A operand A[v * R + l / w, k], which takes
// shuffles to build; a chain multiplies by the same x a hundred times, so x is packed into
// those vectors once (`pack_gemm_lhs`, by the runtime) and each product loads them. The layout
// is chosen in lane-multiplies over the full and the half register width (gemm_packing): W1's
// product takes 13 8-lane vectors on AVX-512 and on AVX2, 130 multiplies where the row kernel
// spends 100 16-lane or 200 8-lane ones. Each element still sums its products over k in order
// from zero, with the same fused multiply-add as the row kernel for floats: the same values,
// and C's vectors are enough independent chains to cover the FMA's latency.
#include "emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ag::jit {
namespace {

// The packed left operand lives on the stack: at most this many bytes.
constexpr int64_t kMaxPackedBytes = 16 * 1024;

int64_t floor_power_of_two(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// The columns cut into power-of-two segments for vectors of `lanes` elements.
Emitter::GemmPacking segment_columns(int64_t lanes, int64_t m, int64_t k, int64_t n) {
  Emitter::GemmPacking p;
  p.lanes = lanes;
  for (int64_t j0 = 0; j0 < n;) {
    Emitter::GemmPacking::Segment s;
    s.j0 = j0;
    s.width = floor_power_of_two(std::min(lanes, n - j0));
    s.rows_per_vector = lanes / s.width;
    s.vectors = (m + s.rows_per_vector - 1) / s.rows_per_vector;
    if (s.rows_per_vector > 1) {
      s.offset = p.packed_vectors;
      p.packed_vectors += s.vectors * k;
    }
    p.vectors += s.vectors;
    p.segments.push_back(s);
    j0 += s.width;
  }
  return p;
}

}  // namespace

std::optional<Emitter::GemmPacking> Emitter::gemm_packing(DType d, int64_t m, int64_t k, int64_t n) const {
  if ((d != DType::Int32 && d != DType::Int64 && d != DType::Float32 && d != DType::Float64) || m <= 0 || k <= 0 || n <= 0)
    return std::nullopt;
  const int64_t widest = vector_bytes_ / static_cast<int64_t>(dtype_size(d));
  if (widest < 2) return std::nullopt;
  // Work in lane-multiplies: a vector op's cost grows with its width (Zen 4 runs a 512-bit
  // multiply as two 256-bit halves; LLVM prefers 256-bit vectors on most AVX-512 CPUs). W1's
  // 10 columns on AVX-512: 7 16-lane vectors (112) or 13 8-lane ones (104), which also need no
  // packing for their 8-column rows and ran faster
  // (docs/performance.md, "Measured decisions": lane-multiplies).
  std::optional<GemmPacking> best;
  for (const int64_t lanes : {widest, vector_bytes_ == 64 ? widest / 2 : int64_t{0}}) {
    if (lanes < 2) continue;
    GemmPacking p = segment_columns(lanes, m, k, n);
    if (p.packed_vectors == 0) continue;  // whole rows: the row kernel's case
    if (!best || p.vectors * p.lanes < best->vectors * best->lanes) best = std::move(p);
  }
  // The row kernel's cost: a register-wide piece per row and 16 columns (masked on AVX-512).
  // Packing pays from a quarter less (its packing and broadcasts cost the rest).
  const int64_t row_kernel = m * ((n + widest - 1) / widest) * widest;
  if (!best || best->vectors * best->lanes * 4 > row_kernel * 3 ||
      best->packed_vectors * best->lanes * static_cast<int64_t>(dtype_size(d)) > kMaxPackedBytes)
    return std::nullopt;
  best->vector_bytes = best->lanes * static_cast<int64_t>(dtype_size(d));
  return best;
}

// Ap's vectors for each packed segment, filled by the runtime (agc_rt_pack_gemm_lhs).
llvm::Value* Emitter::pack_gemm_lhs(const GemmPacking& p, DType d, int64_t m, int64_t k, llvm::Value* a) {
  llvm::Value* ap = stack_alloc(p.packed_vectors * p.vector_bytes);
  for (const GemmPacking::Segment& s : p.segments)
    if (s.offset >= 0)
      b_.CreateCall(runtime("agc_rt_pack_gemm_lhs"),
                    {a, b_.CreateInBoundsGEP(mem_type(d), ap, i64(s.offset * p.lanes)), i64(m), i64(k), i64(s.width),
                     i64(p.lanes), i64(static_cast<int64_t>(dtype_size(d)))});
  return ap;
}

// C[m,n] = A[m,k] * B[k,n] with A also given packed (pack_gemm_lhs): arguments (A, Ap, B, C).
// The vectors of C stay in registers over a loop on k, as many at a time as the registers hold.
llvm::Function* Emitter::small_gemm_packed(const GemmPacking& p, DType d, int64_t m, int64_t k, int64_t n) {
  const std::string name = fmt::format("agc.gemm.packed.{}.{}x{}x{}", dtype_short_name(d), m, k, n);
  if (llvm::Function* f = module_.getFunction(name)) return f;
  llvm::Function* f = matmul_kernel(name, 4);
  const llvm::IRBuilderBase::InsertPointGuard guard(b_);
  b_.SetInsertPoint(&f->getEntryBlock());
  b_.SetCurrentDebugLocation(llvm::DebugLoc());
  llvm::Value* pa = f->getArg(0);
  llvm::Value* ap = f->getArg(1);
  llvm::Value* pb = f->getArg(2);
  llvm::Value* pc = f->getArg(3);
  llvm::Type* et = mem_type(d);
  const auto lanes = static_cast<unsigned>(p.lanes);
  auto* vt = llvm::FixedVectorType::get(et, lanes);
  const llvm::Align elem(dtype_size(d)), whole(static_cast<uint64_t>(p.vector_bytes));

  struct Part {
    const GemmPacking::Segment* s;
    int64_t v;
  };
  std::vector<Part> parts;
  for (const GemmPacking::Segment& s : p.segments)
    for (int64_t v = 0; v < s.vectors; ++v) parts.push_back({&s, v});
  const int64_t registers = vector_bytes_ == 64 ? 32 : 16;
  const auto per_loop = static_cast<size_t>(std::max<int64_t>(1, registers - 4));  // + B's broadcasts, a spare

  for (size_t g0 = 0; g0 < parts.size(); g0 += per_loop) {
    const std::vector<Part> group(parts.begin() + static_cast<std::ptrdiff_t>(g0),
                                  parts.begin() + static_cast<std::ptrdiff_t>(std::min(parts.size(), g0 + per_loop)));
    // C's vectors after products kk, given them after kk - 1 (null: before k = 0).
    auto step = [&](const std::vector<llvm::Value*>* sum, llvm::Value* kk) {
      std::map<const GemmPacking::Segment*, llvm::Value*> brow;  // B[kk, j0 : j0 + w], broadcast
      std::vector<llvm::Value*> next;
      for (size_t j = 0; j < group.size(); ++j) {
        const GemmPacking::Segment& s = *group[j].s;
        llvm::Value*& bv = brow[&s];
        if (!bv) {
          llvm::Value* at = b_.CreateInBoundsGEP(et, pb, b_.CreateAdd(b_.CreateMul(kk, i64(n)), i64(s.j0)));
          if (s.width == 1) {
            bv = b_.CreateVectorSplat(lanes, b_.CreateAlignedLoad(et, at, elem));
          } else {
            llvm::Value* seg = b_.CreateAlignedLoad(llvm::FixedVectorType::get(et, static_cast<unsigned>(s.width)), at, elem);
            std::vector<int> repeat;
            for (unsigned l = 0; l < lanes; ++l) repeat.push_back(static_cast<int>(l % s.width));
            bv = s.width == p.lanes ? seg : b_.CreateShuffleVector(seg, repeat);
          }
        }
        llvm::Value* av = nullptr;
        if (s.offset < 0) {  // one row per vector: A[v, kk] splat
          av = b_.CreateVectorSplat(lanes, load(d, pa, b_.CreateAdd(i64(group[j].v * k), kk)));
        } else {
          llvm::Value* at = b_.CreateMul(b_.CreateAdd(i64(s.offset + group[j].v * k), kk), i64(p.lanes));
          av = b_.CreateAlignedLoad(vt, b_.CreateInBoundsGEP(et, ap, at), whole);
        }
        // k = 0 starts from its product, not from zero plus it
        // (docs/performance.md, "Measured decisions": first product); floats keep the row
        // kernel's fma(a, b, +0), which differs from a * b in the sign of a zero product.
        if (is_floating(d))
          next.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vt},
                                            {av, bv, sum ? (*sum)[j] : llvm::Constant::getNullValue(vt)}));
        else
          next.push_back(sum ? b_.CreateAdd((*sum)[j], b_.CreateMul(av, bv)) : b_.CreateMul(av, bv));
      }
      return next;
    };
    const std::vector<llvm::Value*> first = step(nullptr, i64(0));
    const std::vector<llvm::Value*> acc = loop_carry(
        i64(k - 1), first,
        [&](const std::vector<llvm::Value*>& sum, llvm::Value* j) { return step(&sum, b_.CreateAdd(j, i64(1))); },
        "gemm.k", /*rolled=*/true);
    for (size_t j = 0; j < group.size(); ++j) {
      const GemmPacking::Segment& s = *group[j].s;
      for (int64_t r = 0; r < s.rows_per_vector; ++r) {
        const int64_t row = group[j].v * s.rows_per_vector + r;
        if (row >= m) break;
        llvm::Value* at = b_.CreateInBoundsGEP(et, pc, i64(row * n + s.j0));
        if (s.width == p.lanes) {
          b_.CreateAlignedStore(acc[j], at, elem);
        } else if (s.width == 1) {
          b_.CreateAlignedStore(b_.CreateExtractElement(acc[j], static_cast<uint64_t>(r)), at, elem);
        } else {
          std::vector<int> lanes_of_row;
          for (int64_t l = 0; l < s.width; ++l) lanes_of_row.push_back(static_cast<int>(r * s.width + l));
          b_.CreateAlignedStore(b_.CreateShuffleVector(acc[j], lanes_of_row), at, elem);
        }
      }
    }
  }
  b_.CreateRetVoid();
  return f;
}

}  // namespace ag::jit
