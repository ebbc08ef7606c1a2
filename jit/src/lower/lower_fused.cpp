// Fused elementwise loops. A materialized elementwise value is computed by one loop nest over
// its dims; values fused into it are evaluated inline per element, and every buffer read is
// indexed through its own broadcast strides (0 on broadcast dims: index arithmetic, no copies).
// Static dims that agree across all buffers are collapsed so the inner loop is long and contiguous.
#include "emitter.h"

#include <algorithm>

namespace ag::jit {
namespace {

// Strided: a dim of a slice read in place, whose stride is its buffer's, never merged.
enum class DimState : uint8_t { Full, Broadcast, Dynamic, Strided };

}  // namespace

Walk Emitter::make_walk(const std::vector<llvm::Value*>& dims, const std::vector<const LVal*>& leaves, bool collapse) {
  const size_t r = dims.size();
  // An inline reduction maps the walk's dims onto its operand's one by one (eval_inline_reduction).
  if (std::any_of(leaves.begin(), leaves.end(), [](const LVal* l) { return l->inline_reduction; })) collapse = false;
  struct LeafDims {
    std::vector<llvm::Value*> stride;
    std::vector<DimState> state;
  };
  std::vector<LeafDims> ld(leaves.size());
  for (size_t l = 0; l < leaves.size(); ++l) {
    const std::vector<llvm::Value*>& d = leaves[l]->dims;
    if (d.size() > r) throw InternalError("jit: a fused operand has a higher rank than its loop");
    const bool strided = !leaves[l]->strides.empty();
    const std::vector<llvm::Value*> contiguous = strided ? leaves[l]->strides : contiguous_strides(d);
    for (size_t j = 0; j < r; ++j) {
      const int64_t a = static_cast<int64_t>(j) - static_cast<int64_t>(r - d.size());
      if (a < 0 || is_const(d[static_cast<size_t>(a)], 1)) {
        ld[l].stride.push_back(i64(0));
        ld[l].state.push_back(DimState::Broadcast);
      } else if (strided && llvm::isa<llvm::ConstantInt>(d[static_cast<size_t>(a)])) {
        ld[l].stride.push_back(contiguous[static_cast<size_t>(a)]);
        ld[l].state.push_back(DimState::Strided);
      } else if (llvm::isa<llvm::ConstantInt>(d[static_cast<size_t>(a)])) {
        ld[l].stride.push_back(contiguous[static_cast<size_t>(a)]);
        ld[l].state.push_back(DimState::Full);
      } else {
        llvm::Value* is_one = b_.CreateICmpEQ(d[static_cast<size_t>(a)], i64(1));
        ld[l].stride.push_back(b_.CreateSelect(is_one, i64(0), contiguous[static_cast<size_t>(a)]));
        ld[l].state.push_back(DimState::Dynamic);
      }
    }
  }
  std::vector<llvm::Value*> wd = dims;
  if (collapse) {
    // Dims of size 1 contribute nothing; then merge neighbours that every buffer walks alike.
    for (size_t j = wd.size(); j-- > 0;) {
      if (!is_const(wd[j], 1)) continue;
      wd.erase(wd.begin() + static_cast<std::ptrdiff_t>(j));
      for (auto& l : ld) {
        l.stride.erase(l.stride.begin() + static_cast<std::ptrdiff_t>(j));
        l.state.erase(l.state.begin() + static_cast<std::ptrdiff_t>(j));
      }
    }
    for (size_t j = wd.size(); j-- > 1;) {
      const size_t o = j - 1;
      if (!llvm::isa<llvm::ConstantInt>(wd[o]) || !llvm::isa<llvm::ConstantInt>(wd[j])) continue;
      const bool mergeable = std::all_of(ld.begin(), ld.end(), [&](const LeafDims& l) {
        return l.state[o] == l.state[j] && l.state[j] != DimState::Dynamic && l.state[j] != DimState::Strided;
      });
      if (!mergeable) continue;
      wd[o] = b_.CreateMul(wd[o], wd[j]);
      wd.erase(wd.begin() + static_cast<std::ptrdiff_t>(j));
      for (auto& l : ld) {
        l.stride[o] = l.stride[j];
        l.stride.erase(l.stride.begin() + static_cast<std::ptrdiff_t>(j));
        l.state.erase(l.state.begin() + static_cast<std::ptrdiff_t>(j));
      }
    }
  }
  Walk w;
  w.dims = std::move(wd);
  for (size_t l = 0; l < leaves.size(); ++l) w.strides.emplace_back(leaves[l], std::move(ld[l].stride));
  return w;
}

void Emitter::collect_leaves(Scope& s, ValueId v, std::vector<const LVal*>& out) {
  const LVal& lv = s.at(v);
  // A fused draw walks its own index; an inline reduction builds its own walk of its operand.
  const bool own_walk = lv.kind == LVal::Kind::Fused && (lv.counter || lv.inline_reduction);
  if (lv.kind == LVal::Kind::Fused && !own_walk) {
    const Node& n = s.graph().nodes[v.node];
    if (n.op == OpKind::FillLike) return;  // a constant: reads nothing
    if (n.op == OpKind::Gather) return;    // reads its buffers at its own index (eval_gather)
    for (ValueId in : n.inputs) collect_leaves(s, in, out);
    // A fused check walks its value's own index too, which its error names.
    if (n.op == OpKind::CheckNumerics && std::find(out.begin(), out.end(), &lv) == out.end()) out.push_back(&lv);
  } else if ((lv.kind == LVal::Kind::Buf || own_walk) && std::find(out.begin(), out.end(), &lv) == out.end()) {
    out.push_back(&lv);
  }
}

llvm::Value* Emitter::eval_element(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& idx) {
  const LVal& lv = s.at(v);
  switch (lv.kind) {
    case LVal::Kind::Reg: return lv.reg;
    case LVal::Kind::Buf: {
      const std::vector<llvm::Value*>* strides = w.find(&lv);
      if (!strides) throw InternalError("jit: an operand missing from its loop's walk");
      return load(lv.dtype, lv.ptr, linear_offset(*strides, idx));
    }
    case LVal::Kind::Fused: {
      if (lv.inline_reduction) return eval_inline_reduction(s, v, w, idx);
      const Node& n = s.graph().nodes[v.node];
      if (n.op == OpKind::Gather) return eval_gather(s, v, idx);
      if (lv.counter) {  // a fused draw: element k of its own row-major layout
        const std::vector<llvm::Value*>* strides = w.find(&lv);
        if (!strides) throw InternalError("jit: a fused draw missing from its loop's walk");
        return uniform_element(n, lv, linear_offset(*strides, idx));
      }
      std::vector<llvm::Value*> args;
      if (n.op != OpKind::FillLike)
        for (ValueId in : n.inputs) args.push_back(eval_element(s, in, w, idx));
      if (n.op == OpKind::CheckNumerics) {
        const std::vector<llvm::Value*>* own = w.find(&lv);
        return check_element(s.node_id(v.node), args[0], own ? linear_offset(*own, idx) : nullptr);
      }
      const DType in = n.inputs.empty() ? lv.dtype : s.type(n.inputs.back()).dtype;
      return scalar_op(n, s.node_id(v.node), in, args);
    }
    default: throw InternalError("jit: a fused expression reads a value without elements");
  }
}

void Emitter::lower_elementwise(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const TensorType& t = n.outputs[0];
  LVal out;
  out.dtype = t.dtype;
  out.dims = broadcast_dims(s, i);
  const ValueStorage storage = s.plan->values[i][0].storage;
  const DType in = n.inputs.empty() ? t.dtype : s.type(n.inputs.back()).dtype;
  if (storage == ValueStorage::Fused) {
    out.kind = LVal::Kind::Fused;
    s.values[i] = {out};
    return;
  }
  if (storage == ValueStorage::Reg) {
    std::vector<llvm::Value*> args;
    if (n.op != OpKind::FillLike)
      for (ValueId v : n.inputs) args.push_back(as_register(s.at(v)));
    out.kind = LVal::Kind::Reg;
    out.reg = scalar_op(n, s.node_id(i), in, args);
    s.values[i] = {out};
    return;
  }
  out.kind = LVal::Kind::Buf;
  if (storage == ValueStorage::Box) box_destination(s, i, out);  // written into its update's box
  else out.ptr = allocate_value(s, {i, 0}, out.dims);
  std::vector<const LVal*> leaves;
  if (n.op != OpKind::FillLike)
    for (ValueId v : n.inputs) collect_leaves(s, v, leaves);
  leaves.push_back(&out);
  const Walk w = make_walk(out.dims, leaves, /*collapse=*/true);
  if (lower_elementwise_vector(s, i, out, w)) {
    s.values[i] = {out};
    return;
  }
  parallel_loop_nest(w.dims, {out.ptr}, [&](const std::vector<llvm::Value*>& idx) {
    std::vector<llvm::Value*> args;
    if (n.op != OpKind::FillLike)
      for (ValueId v : n.inputs) args.push_back(eval_element(s, v, w, idx));
    const bool check = n.op == OpKind::CheckNumerics;
    llvm::Value* value = check ? nullptr : scalar_op(n, s.node_id(i), in, args);
    llvm::Value* offset = linear_offset(*w.find(&out), idx);
    store(t.dtype, out.ptr, offset, check ? check_element(s.node_id(i), args[0], offset) : value);
  });
  s.values[i] = {out};
}

void Emitter::update_in_place(Scope& s, uint32_t i, llvm::Value* dst) {
  const Node& n = s.graph().nodes[i];
  const DType d = n.outputs[0].dtype;
  LVal var;
  var.kind = LVal::Kind::Buf;
  var.dtype = d;
  var.dims = static_dims(n.outputs[0].shape);
  var.ptr = dst;
  std::vector<const LVal*> leaves;
  collect_leaves(s, n.inputs[0], leaves);
  leaves.push_back(&var);
  const Walk w = make_walk(var.dims, leaves, /*collapse=*/true);
  const bool add = n.op == OpKind::AssignAddVariable;
  parallel_loop_nest(w.dims, {dst}, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* offset = linear_offset(*w.find(&var), idx);
    llvm::Value* a = load(d, dst, offset);
    llvm::Value* x = eval_element(s, n.inputs[0], w, idx);
    // As the eager update: IEEE arithmetic on floats (nothing contracted), integers wrap.
    llvm::Value* r = is_floating(d) ? (add ? b_.CreateFAdd(a, x) : b_.CreateFSub(a, x)) : (add ? b_.CreateAdd(a, x) : b_.CreateSub(a, x));
    store(d, dst, offset, r);
  });
}

}  // namespace ag::jit
