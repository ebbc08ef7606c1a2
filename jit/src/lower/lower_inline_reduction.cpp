// Inline reductions: a reduction over a few static elements (fusion.h, kMaxInlineReduction)
// fused into the loop that reads it. n-body's `rsqrt(reduce_sum(d * d, 2) + eps)` over
// d = [N, N, 3] is then one loop over [N, N] summing three products per element, where it was a
// loop writing d * d's [N, N, 3], a reduction into [N, N] and a third loop for the rsqrt.
//
// The consumer's walk has the reduction's output dims (right-aligned, never collapsed); the
// reduction's own walk is that walk's dims followed by the reduced dims, with each buffer under
// the reduction given its strides along both, so its operand is evaluated at the walk's index
// extended by each reduced position in turn (row-major, the order its own loop would take).
#include <algorithm>

#include "reduction_ops.h"

namespace ag::jit {
namespace {

bool reduces(const Node& n, size_t k) {
  const Shape& axes = n.attrs.axes();
  return std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) != axes.end();
}

}  // namespace

void Emitter::describe_inline_reduction(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const LVal& in = s.at(n.inputs[0]);
  LVal out;
  out.kind = LVal::Kind::Fused;
  out.inline_reduction = true;
  out.dtype = n.outputs[0].dtype;
  for (size_t k = 0; k < in.dims.size(); ++k) {
    if (!reduces(n, k)) out.dims.push_back(in.dims[k]);
    else if (n.attrs.keepdims) out.dims.push_back(i64(1));
  }
  s.values[i] = {out};
}

llvm::Value* Emitter::eval_inline_reduction(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& idx) {
  const Node& n = s.graph().nodes[v.node];
  const ValueId x = n.inputs[0];
  const LVal& in = s.at(x);
  const size_t rx = in.dims.size(), ro = s.at(v).dims.size(), rw = w.dims.size();
  if (ro > rw || idx.size() != rw) throw InternalError("jit: an inline reduction read by a walk of lower rank");
  // Per operand dim: the walk dim it follows (kept dims, right-aligned with the output), or its
  // position among the reduced dims appended to the walk.
  std::vector<size_t> ext_dim(rx);
  std::vector<llvm::Value*> dims = w.dims;
  std::vector<int64_t> reduced;  // static sizes, checked by fusion (inline_reduction_count)
  for (size_t k = 0, o = 0; k < rx; ++k) {
    if (reduces(n, k)) {
      const auto* size = llvm::dyn_cast<llvm::ConstantInt>(in.dims[k]);
      if (!size) throw InternalError("jit: an inline reduction over a dim of unknown size");
      ext_dim[k] = dims.size();
      dims.push_back(in.dims[k]);
      reduced.push_back(size->getSExtValue());
      if (n.attrs.keepdims) ++o;
    } else {
      ext_dim[k] = rw - ro + o++;
    }
  }
  // Every buffer under the reduction, with its stride along each dim of the extended walk (0
  // where it broadcasts: a missing dim, a static 1, a run-time 1).
  std::vector<const LVal*> leaves;
  collect_leaves(s, x, leaves);
  Walk ext;
  ext.dims = dims;
  for (const LVal* leaf : leaves) {
    if (leaf->inline_reduction) throw InternalError("jit: an inline reduction inside another");
    const std::vector<llvm::Value*> own = leaf->strides.empty() ? contiguous_strides(leaf->dims) : leaf->strides;
    std::vector<llvm::Value*> strides(dims.size(), i64(0));
    const size_t rl = leaf->dims.size();
    for (size_t k = rx - std::min(rx, rl); k < rx; ++k) {
      const size_t a = k - (rx - rl);
      llvm::Value* d = leaf->dims[a];
      if (is_const(d, 1)) continue;
      strides[ext_dim[k]] = llvm::isa<llvm::ConstantInt>(d) ? own[a] : b_.CreateSelect(b_.CreateICmpEQ(d, i64(1)), i64(0), own[a]);
    }
    ext.strides.emplace_back(leaf, std::move(strides));
  }
  // The reduced positions in row-major order, each element combined into the accumulator.
  const DType d = s.type(v).dtype;
  const bool fp = is_floating(d);
  llvm::Value* acc = reduction_initial_value(*this, n.op, d);
  std::vector<int64_t> at(reduced.size(), 0);
  int64_t count = 1;
  for (int64_t r : reduced) count *= r;
  std::vector<llvm::Value*> ext_idx = idx;
  ext_idx.resize(dims.size());
  for (int64_t e = 0; e < count; ++e) {
    for (size_t k = 0; k < at.size(); ++k) ext_idx[rw + k] = i64(at[k]);
    acc = reduction_combine(b_, n.op, fp, acc, eval_element(s, x, ext, ext_idx));
    for (size_t k = at.size(); k-- > 0;) {  // the next position, last dim fastest
      if (++at[k] < reduced[k]) break;
      at[k] = 0;
    }
  }
  if (n.op != OpKind::ReduceMean) return acc;
  return fp ? b_.CreateFDiv(acc, llvm::ConstantFP::get(acc->getType(), static_cast<double>(count)))
            : b_.CreateSDiv(acc, llvm::ConstantInt::get(acc->getType(), count));
}

}  // namespace ag::jit
