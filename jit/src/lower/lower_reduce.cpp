// Reductions over axes and arg-reductions. A reduction walks its operand's index space once, in
// row-major order, accumulating into its output (which the walk reads with stride 0 on reduced
// dims); the operand's fused producers are evaluated inside that walk. Float sums may be
// reassociated (like Eigen's vectorized sums) so the loop vectorizer can use vector accumulators.
// Row reductions of large operands split by rows over the thread pool (parallel_loops.cpp); full
// and column reductions of large operands in fixed chunks or blocks of rows
// (lower_reduce_parallel.cpp).
#include "reduce_parallel.h"

#include <algorithm>
#include <limits>

namespace ag::jit {
namespace {

bool has_axis(const Shape& axes, int64_t d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); }

// A float's ordered key: a signed integer of its width that orders as IEEE 754's maximum and
// minimum do (-0 below +0), every NaN mapped to the key that wins (the largest for a max, the
// smallest for a min), so an integer max or min of keys is the float one.
llvm::Value* ordered_key(llvm::IRBuilder<>& b, llvm::Value* v, bool for_max) {
  auto* int_type = b.getIntNTy(v->getType()->getPrimitiveSizeInBits());
  const unsigned bits = int_type->getBitWidth();
  llvm::Value* raw = b.CreateBitCast(v, int_type);
  // Negative floats (sign bit set) order backwards as integers: flip their other bits.
  llvm::Value* sign = b.CreateAShr(raw, bits - 1);
  llvm::Value* key = b.CreateXor(raw, b.CreateAnd(sign, llvm::ConstantInt::get(int_type, llvm::APInt::getSignedMaxValue(bits))));
  llvm::Value* nan_key = llvm::ConstantInt::get(int_type, for_max ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getSignedMinValue(bits));
  return b.CreateSelect(b.CreateFCmpUNO(v, v), nan_key, key);
}

// The float of an ordered key (the same flip undoes it; the NaN key gives a quiet NaN).
llvm::Value* from_ordered_key(llvm::IRBuilder<>& b, llvm::Value* key, llvm::Type* float_type, bool for_max) {
  auto* int_type = llvm::cast<llvm::IntegerType>(key->getType());
  const unsigned bits = int_type->getBitWidth();
  llvm::Value* sign = b.CreateAShr(key, bits - 1);
  llvm::Value* raw = b.CreateXor(key, b.CreateAnd(sign, llvm::ConstantInt::get(int_type, llvm::APInt::getSignedMaxValue(bits))));
  llvm::Value* nan_key = llvm::ConstantInt::get(int_type, for_max ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getSignedMinValue(bits));
  return b.CreateSelect(b.CreateICmpEQ(key, nan_key), llvm::ConstantFP::getNaN(float_type), b.CreateBitCast(raw, float_type));
}

// The number of leading walk dims a reduction keeps, when every dim after them is reduced (its
// output stride is 0) and none before them is; else the walk's rank (no row form).
template <class IsZero>
size_t kept_prefix(const std::vector<llvm::Value*>& acc_strides, IsZero is_zero) {
  size_t kept = acc_strides.size();
  while (kept > 0 && is_zero(acc_strides[kept - 1])) --kept;
  for (size_t k = 0; k < kept; ++k)
    if (is_zero(acc_strides[k])) return acc_strides.size();
  return kept;
}


}  // namespace

// The row form: the walk's trailing dims are reduced and its leading ones kept. Each output
// element is accumulated in a register over its row, in the same order, and stored once. Needed
// where outer loops stay loops: the memory form leaves a load and a store per element that LLVM
// forwards only when it unrolls the rows (docs/jit.md, "Compile times"). A float max or min runs
// on ordered integer keys: one integer max per element, where IEEE's maximum (NaN and signed
// zeros) took five vector instructions in the accumulator's dependency chain and a long
// horizontal step per row.
void Emitter::reduce_rows(Scope& s, ValueId x, const Walk& w, llvm::Value* acc, const std::vector<llvm::Value*>& acc_strides,
                          size_t kept, DType d, OpKind op, bool rows_independent, const Combine& combine) {
  const auto kept_end = w.dims.begin() + static_cast<std::ptrdiff_t>(kept);
  const std::vector<llvm::Value*> outer(w.dims.begin(), kept_end), row(kept_end, w.dims.end());
  const bool keyed = is_floating(d) && (op == OpKind::ReduceMax || op == OpKind::ReduceMin);
  const bool is_max = op == OpKind::ReduceMax;
  auto reduce_row = [&](const std::vector<llvm::Value*>& oidx) {
    std::vector<llvm::Value*> idx = oidx;
    idx.resize(w.dims.size());
    std::function<llvm::Value*(size_t, llvm::Value*)> level = [&](size_t k, llvm::Value* a) -> llvm::Value* {
      if (k == w.dims.size()) {
        llvm::Value* v = eval_element(s, x, w, idx);
        if (!keyed) return combine(a, v);
        return b_.CreateIntrinsic(is_max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, {a->getType()},
                                  {a, ordered_key(b_, v, is_max)});
      }
      return loop_reduce(w.dims[k], a, [&](llvm::Value* a_k, llvm::Value* j) {
        idx[k] = j;
        return level(k + 1, a_k);
      });
    };
    llvm::Value* off = linear_offset(acc_strides, oidx);
    llvm::Value* first = load(d, acc, off);
    llvm::Value* result = level(kept, keyed ? ordered_key(b_, first, is_max) : first);
    store(d, acc, off, keyed ? from_ordered_key(b_, result, first->getType(), is_max) : result);
  };
  if (outer.empty()) reduce_row({});
  else if (rows_independent) parallel_loop_nest(outer, acc, reduce_row, numel(row));  // a row's work per index
  else loop_nest(outer, reduce_row);
}

void Emitter::lower_reduce(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const ValueId x = n.inputs[0];
  const LVal& in = s.at(x);
  const TensorType& t = n.outputs[0];
  const DType d = t.dtype;
  const bool fp = is_floating(d);

  LVal out;
  out.dtype = d;
  LVal acc_view;  // the output seen with the operand's rank (reduced dims of size 1)
  acc_view.dtype = d;
  acc_view.kind = LVal::Kind::Buf;
  llvm::Value* count = i64(1);
  for (size_t k = 0; k < in.dims.size(); ++k) {
    if (has_axis(n.attrs.axes(), static_cast<int64_t>(k))) {
      count = b_.CreateMul(count, in.dims[k]);
      acc_view.dims.push_back(i64(1));
      if (n.attrs.keepdims) out.dims.push_back(i64(1));
    } else {
      acc_view.dims.push_back(in.dims[k]);
      out.dims.push_back(in.dims[k]);
    }
  }
  llvm::Value* acc = result_buffer(s, i, out.dims);
  acc_view.ptr = acc;
  llvm::Value* out_n = numel(out.dims);

  llvm::Value* init = nullptr;
  switch (n.op) {
    case OpKind::ReduceProd: init = constant(d, 1, 1); break;
    case OpKind::ReduceAll: init = b_.getTrue(); break;
    case OpKind::ReduceAny: init = b_.getFalse(); break;
    case OpKind::ReduceMax:
      init = constant(d, -std::numeric_limits<double>::infinity(),
                      d == DType::Int32 ? std::numeric_limits<int32_t>::lowest() : std::numeric_limits<int64_t>::lowest());
      break;
    case OpKind::ReduceMin:
      init = constant(d, std::numeric_limits<double>::infinity(),
                      d == DType::Int32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max());
      break;
    default: init = constant(d, 0, 0); break;
  }
  loop(out_n, [&](llvm::Value* k) { store(d, acc, k, init); });

  std::vector<const LVal*> leaves;
  collect_leaves(s, x, leaves);
  leaves.push_back(&acc_view);
  const Walk w = make_walk(in.dims, leaves, /*collapse=*/true);
  llvm::FastMathFlags reassoc;
  reassoc.setAllowReassoc();
  auto with_flags = [&](llvm::Value* v) {
    if (auto* inst = llvm::dyn_cast<llvm::Instruction>(v)) inst->setFastMathFlags(reassoc);
    return v;
  };
  // Rows of the output are independent when the walk's outer dim is kept (its output stride is
  // a non-zero constant): then the thread pool may split the walk by rows, each output element
  // still accumulated in order by one thread. A reduced outer dim (a full or column reduction)
  // keeps the walk serial.
  const std::vector<llvm::Value*>& acc_strides = *w.find(&acc_view);
  llvm::Value* outer_stride = w.dims.empty() ? nullptr : acc_strides[0];
  const bool rows_independent = outer_stride && llvm::isa<llvm::ConstantInt>(outer_stride) && !is_const(outer_stride, 0);
  const Combine combine = [&](llvm::Value* a, llvm::Value* v) -> llvm::Value* {
    switch (n.op) {
      case OpKind::ReduceSum:
      case OpKind::ReduceMean: return fp ? with_flags(b_.CreateFAdd(a, v)) : b_.CreateAdd(a, v);
      case OpKind::ReduceProd: return fp ? with_flags(b_.CreateFMul(a, v)) : b_.CreateMul(a, v);
      case OpKind::ReduceMax:
        return b_.CreateIntrinsic(fp ? llvm::Intrinsic::maximum : llvm::Intrinsic::smax, {a->getType()}, {a, v});
      case OpKind::ReduceMin:
        return b_.CreateIntrinsic(fp ? llvm::Intrinsic::minimum : llvm::Intrinsic::smin, {a->getType()}, {a, v});
      case OpKind::ReduceAny: return b_.CreateOr(a, v);
      default: return b_.CreateAnd(a, v);
    }
  };
  const size_t kept = kept_prefix(acc_strides, [&](llvm::Value* v) { return is_const(v, 0); });
  auto serial = [&] {
    if (prog_.rolled_loops && kept < w.dims.size()) {
      reduce_rows(s, x, w, acc, acc_strides, kept, d, n.op, rows_independent, combine);
      return;
    }
    const auto accumulate = [&](const std::vector<llvm::Value*>& idx) {
      llvm::Value* v = eval_element(s, x, w, idx);
      llvm::Value* off = linear_offset(acc_strides, idx);
      store(d, acc, off, combine(load(d, acc, off), v));
    };
    if (rows_independent) parallel_loop_nest(w.dims, acc, accumulate);
    else loop_nest(w.dims, accumulate);
  };
  const ReductionSite site{s, i, x, w, d, init, combine};
  const bool split = is_const(out_n, 1) ? lower_parallel_full_reduction(*this, site, acc, serial)
                                        : lower_parallel_column_reduction(*this, site, acc_view, serial);
  if (!split) serial();

  if (n.op == OpKind::ReduceMean) {
    loop(out_n, [&](llvm::Value* k) {
      llvm::Value* sum = load(d, acc, k);
      llvm::Value* mean = nullptr;
      if (fp) {
        mean = b_.CreateFDiv(sum, b_.CreateSIToFP(count, sum->getType()));
      } else {
        // Integer mean truncates; an empty reduction gives 0.
        llvm::Value* c = b_.CreateTrunc(count, sum->getType());
        llvm::Value* nonzero = b_.CreateICmpNE(c, llvm::ConstantInt::get(c->getType(), 0));
        llvm::Value* safe = b_.CreateSelect(nonzero, c, llvm::ConstantInt::get(c->getType(), 1));
        mean = b_.CreateSelect(nonzero, b_.CreateSDiv(sum, safe), llvm::ConstantInt::get(c->getType(), 0));
      }
      store(d, acc, k, mean);
    });
  }
  finish_result(s, i, out, acc);
}

void Emitter::lower_arg_reduce(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const ValueId x = n.inputs[0];
  const LVal& in = s.at(x);
  const DType d = s.type(x).dtype;
  const bool fp = is_floating(d);
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  const size_t axis = static_cast<size_t>(n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis);
  fail_if(b_.CreateICmpEQ(in.dims[axis], i64(0)), s.node_id(i), FailKind::ArgEmpty);

  LVal out;
  out.dtype = DType::Int64;
  for (size_t k = 0; k < in.dims.size(); ++k)
    if (k != axis) out.dims.push_back(in.dims[k]);
  llvm::Value* dst = result_buffer(s, i, out.dims);
  const std::vector<llvm::Value*> out_strides = contiguous_strides(out.dims);

  std::vector<const LVal*> leaves;
  collect_leaves(s, x, leaves);
  const Walk w = make_walk(in.dims, leaves, /*collapse=*/false);
  // The best value and its index in registers: output elements are independent, so the pool
  // may split a large one's outer loop (each element found by one thread, the same answer).
  parallel_loop_nest(
      out.dims, dst,
      [&](const std::vector<llvm::Value*>& oidx) {
        std::vector<llvm::Value*> idx = oidx;
        idx.insert(idx.begin() + static_cast<std::ptrdiff_t>(axis), i64(0));
        const std::vector<llvm::Value*> first{eval_element(s, x, w, idx), i64(0)};
        const std::vector<llvm::Value*> best = loop_carry(
            b_.CreateSub(in.dims[axis], i64(1)), first, [&](const std::vector<llvm::Value*>& acc, llvm::Value* r) {
              // The first occurrence wins: only a strictly better element replaces the best.
              llvm::Value* pos = b_.CreateAdd(r, i64(1));
              idx[axis] = pos;
              llvm::Value* v = eval_element(s, x, w, idx);
              llvm::Value* better = n.op == OpKind::ArgMax ? (fp ? b_.CreateFCmpOGT(v, acc[0]) : b_.CreateICmpSGT(v, acc[0]))
                                                           : (fp ? b_.CreateFCmpOLT(v, acc[0]) : b_.CreateICmpSLT(v, acc[0]));
              return std::vector<llvm::Value*>{b_.CreateSelect(better, v, acc[0]), b_.CreateSelect(better, pos, acc[1])};
            });
        store(DType::Int64, dst, linear_offset(out_strides, oidx), best[1]);
      },
      /*inner_work=*/in.dims[axis]);
  finish_result(s, i, out, dst);
}

}  // namespace ag::jit
