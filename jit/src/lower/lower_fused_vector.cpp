// Fused elementwise loops emitted as vector code. A float expression over a 1-D walk (every
// buffer read contiguously or broadcast) is computed a target register of elements at a time,
// so LLVM's loop vectorizer has nothing left to do: whole blocks as plain vector loads and
// stores, and the last, partial block under a mask of the elements left (AVX-512, where masked
// loads and stores are plain instructions) or element by element (elsewhere); a static size of
// whole blocks has no partial form. Every block under
// a mask, one copy of the body, ran W3's cheap chain slower on Zen 4 because of the masked
// stores (docs/performance.md, "Measured decisions": masked tail only).
// The values are those of the scalar loop, lane by lane: the same operations on each element,
// in the same order (no reassociation), the same fmuladd contractions.
//
// A result far larger than the last-level cache is written with non-temporal stores: a cached
// store first reads the line it writes (a third stream of DRAM traffic next to the read and the
// write-back) and then evicts data still needed; W3's cheap chain on 16M floats spends its time
// on exactly that traffic, and two threads share the one memory bus.
#include "emitter.h"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/TargetParser/Triple.h>

namespace ag::jit {
namespace {

// Rows of at most this many blocks are emitted as straight code, without a block loop.
constexpr int64_t kInlineBlocks = 4;

}  // namespace

bool Emitter::vector_op(OpKind op, DType d) const {
  if (op == OpKind::CheckNumerics) return true;  // its own vector form (check_vector), not scalar_op's
  switch (op_info(op).vector) {
    case VectorForm::yes: return true;
    case VectorForm::f32: return d == DType::Float32;
    case VectorForm::mvec: return has_vector_math();
    case VectorForm::no: return false;
  }
  return false;
}

// Whether v's elements can be computed as vectors in a loop of float dtype `d` (conditions in
// between are bool vectors).
bool Emitter::vectorizable(Scope& s, ValueId v, DType d) const {
  const LVal& lv = s.at(v);
  switch (lv.kind) {
    case LVal::Kind::Reg:
    // A bool operand (a mask) is read as bytes and compared: eval_vector's vector of i1.
    case LVal::Kind::Buf: return lv.dtype == d || lv.dtype == DType::Bool;
    case LVal::Kind::Fused: {
      if (lv.counter) return false;  // a fused random draw: its own counter walk
      const Node& n = s.graph().nodes[v.node];
      if (n.op == OpKind::Gather) return gather_vectorizable(s, v, d);  // in a scatter's rows
      const DType out = n.outputs[0].dtype;
      if (out != d && out != DType::Bool) return false;
      if (!vector_op(n.op, out == DType::Bool && !n.inputs.empty() ? s.type(n.inputs.back()).dtype : out))
        return false;
      for (ValueId in : n.inputs)
        if (!vectorizable(s, in, d)) return false;
      return true;
    }
    default: return false;
  }
}

llvm::Value* Emitter::eval_vector(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& outer,
                                  llvm::Value* base, unsigned lanes, llvm::Value* mask,
                                  std::vector<std::pair<const LVal*, llvm::Value*>>& loaded) {
  const LVal& lv = s.at(v);
  auto splat = [&](llvm::Value* x) { return b_.CreateVectorSplat(lanes, x); };
  switch (lv.kind) {
    case LVal::Kind::Reg: return splat(lv.reg);
    case LVal::Kind::Buf: {
      for (const auto& [buffer, vector] : loaded)
        if (buffer == &lv) return vector;
      const std::vector<llvm::Value*>* strides = w.find(&lv);
      if (!strides) throw InternalError("jit: an operand missing from its vector loop's walk");
      // Its offset in the outer dims' element, then the block's along the inner dim.
      llvm::Value* row = linear_offset(std::vector<llvm::Value*>(strides->begin(), strides->end() - 1), outer);
      llvm::Value* vector = nullptr;
      if (is_const(strides->back(), 0)) {
        vector = splat(load(lv.dtype, lv.ptr, row));  // broadcast along the inner dim
      } else {
        llvm::Type* et = mem_type(lv.dtype);
        llvm::Type* vt = llvm::FixedVectorType::get(et, lanes);
        llvm::Value* ptr = b_.CreateInBoundsGEP(et, lv.ptr, b_.CreateAdd(row, base));
        const llvm::Align align(dtype_size(lv.dtype));
        if (mask) vector = b_.CreateMaskedLoad(vt, ptr, align, mask, llvm::Constant::getNullValue(vt));
        else vector = b_.CreateAlignedLoad(vt, ptr, align);
        if (lv.dtype == DType::Bool) vector = b_.CreateTrunc(vector, llvm::FixedVectorType::get(b_.getInt1Ty(), lanes));
      }
      loaded.emplace_back(&lv, vector);
      return vector;
    }
    case LVal::Kind::Fused: {
      const Node& n = s.graph().nodes[v.node];
      if (n.op == OpKind::FillLike)
        return splat(constant(lv.dtype, n.attrs.scalar, static_cast<int64_t>(n.attrs.scalar)));
      if (n.op == OpKind::Gather) return eval_gather_vector(s, v, base, lanes, mask);
      std::vector<llvm::Value*> args;
      for (ValueId in : n.inputs) args.push_back(eval_vector(s, in, w, outer, base, lanes, mask, loaded));
      if (n.op == OpKind::CheckNumerics) {  // a leaf of the walk too: its own element of lane 0
        const std::vector<llvm::Value*>* own = w.find(&lv);
        if (!own) throw InternalError("jit: a fused check missing from its vector loop's walk");
        llvm::Value* row = linear_offset(std::vector<llvm::Value*>(own->begin(), own->end() - 1), outer);
        const int64_t step = is_const(own->back(), 0) ? 0 : 1;
        return check_vector(s.node_id(v.node), args[0], step ? b_.CreateAdd(row, base) : row, step, mask);
      }
      const DType in = n.inputs.empty() ? lv.dtype : s.type(n.inputs.back()).dtype;
      return scalar_op(n, s.node_id(v.node), in, args);
    }
    default: throw InternalError("jit: a vector loop reads a value without elements");
  }
}

// Only results the runtime allocated (64-byte aligned) of a static size past the threshold, and
// only where every whole block starts on a vector boundary (one row, or rows of whole blocks):
// x86's streaming stores need aligned addresses. The partial block stays a cached masked store.
bool Emitter::streaming_output(const LVal& out, const Walk& w, DType d, unsigned lanes) const {
  if (!llvm::Triple(module_.getTargetTriple()).isX86() || !aligned_results_.count(out.ptr)) return false;
  int64_t elements = 1;
  for (llvm::Value* dim : w.dims) {
    const auto* c = llvm::dyn_cast<llvm::ConstantInt>(dim);
    if (!c) return false;
    elements *= c->getSExtValue();
  }
  const int64_t row = llvm::cast<llvm::ConstantInt>(w.dims.back())->getSExtValue();
  if (w.dims.size() > 1 && row % lanes != 0) return false;
  return program().config.streams(elements * static_cast<int64_t>(dtype_size(d)));
}

bool Emitter::lower_elementwise_vector(Scope& s, uint32_t i, const LVal& out, const Walk& w) {
  const Node& n = s.graph().nodes[i];
  const DType d = out.dtype;
  if (!program().config.vector_loops || (d != DType::Float32 && d != DType::Float64) || w.dims.empty() || n.op == OpKind::FillLike) return false;
  for (const auto& [leaf, strides] : w.strides)  // the inner dim read contiguously or broadcast
    if (!is_const(strides.back(), 0) && !is_const(strides.back(), 1)) return false;
  const unsigned lanes = static_cast<unsigned>(vector_bytes_ / static_cast<int64_t>(dtype_size(d)));
  llvm::Value* count = w.dims.back();
  if (lanes < 2 || (llvm::isa<llvm::ConstantInt>(count) && llvm::cast<llvm::ConstantInt>(count)->getSExtValue() < lanes))
    return false;
  if (!vector_op(n.op, d)) return false;
  for (ValueId in : n.inputs)
    if (!vectorizable(s, in, d)) return false;

  const bool masked = vector_bytes_ == 64;  // AVX-512: the partial block under a mask
  const llvm::Align align(dtype_size(d));
  const DType in = n.inputs.empty() ? d : s.type(n.inputs.back()).dtype;
  llvm::Value* blocks = b_.CreateUDiv(b_.CreateAdd(count, i64(lanes - 1)), i64(lanes));
  std::vector<llvm::Constant*> lane_index;
  for (unsigned l = 0; l < lanes; ++l) lane_index.push_back(b_.getInt64(l));
  llvm::Constant* lane_ids = llvm::ConstantVector::get(lane_index);
  const bool stream = streaming_output(out, w, d, lanes);
  llvm::MDNode* nontemporal = llvm::MDNode::get(ctx_ref_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))});
  const bool was = emitting_vectors_, was_streaming = streaming_stores_;
  emitting_vectors_ = true;
  streaming_stores_ = stream;
  std::vector<llvm::Value*> outer;  // the outer dims' index of the block being emitted
  auto vector_block = [&](llvm::Value* base, llvm::Value* mask) {
    std::vector<std::pair<const LVal*, llvm::Value*>> loaded;
    std::vector<llvm::Value*> args;
    std::vector<PendingCheck> checks;  // the block's numeric checks: one branch for all of them
    pending_checks_ = &checks;
    for (ValueId v : n.inputs) args.push_back(eval_vector(s, v, w, outer, base, lanes, mask, loaded));
    const std::vector<llvm::Value*>& out_strides = *w.find(&out);
    llvm::Value* row = linear_offset(std::vector<llvm::Value*>(out_strides.begin(), out_strides.end() - 1), outer);
    llvm::Value* value = n.op == OpKind::CheckNumerics ? check_vector(s.node_id(i), args[0], b_.CreateAdd(row, base), 1, mask)
                                                       : scalar_op(n, s.node_id(i), in, args);
    pending_checks_ = nullptr;
    flush_checks(checks);
    llvm::Value* ptr = b_.CreateInBoundsGEP(mem_type(d), out.ptr, b_.CreateAdd(row, base));
    if (mask) b_.CreateMaskedStore(value, ptr, align, mask);
    else if (!stream) b_.CreateAlignedStore(value, ptr, align);
    else b_.CreateAlignedStore(value, ptr, llvm::Align(vector_bytes_))->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
  };
  // The last, partial block at `base` (`left` elements): masked, or element by element.
  auto partial_block = [&](llvm::Value* base, llvm::Value* left) {
    if (masked) {
      vector_block(base, b_.CreateICmpSLT(lane_ids, b_.CreateVectorSplat(lanes, left)));
      return;
    }
    loop(left, [&](llvm::Value* k) {
      std::vector<llvm::Value*> idx1 = outer;
      idx1.push_back(b_.CreateAdd(base, k));
      std::vector<llvm::Value*> args;
      for (ValueId v : n.inputs) args.push_back(eval_element(s, v, w, idx1));
      llvm::Value* offset = linear_offset(*w.find(&out), idx1);
      store(d, out.ptr, offset, n.op == OpKind::CheckNumerics ? check_element(s.node_id(i), args[0], offset)
                                                              : scalar_op(n, s.node_id(i), in, args));
    });
  };
  std::vector<llvm::Value*> nest(w.dims.begin(), w.dims.end() - 1);
  const auto* static_count = llvm::dyn_cast<llvm::ConstantInt>(count);
  const int64_t whole = static_count ? static_count->getSExtValue() / lanes : -1;
  const int64_t rest = static_count ? static_count->getSExtValue() % lanes : -1;
  if (static_count && whole + (rest > 0) <= kInlineBlocks) {
    // A short row: its blocks emitted one after the other; a loop of two blocks ran W1b's [8,32]
    // rows slower than LLVM's unrolled code (docs/performance.md, "Measured decisions": short row).
    parallel_loop_nest(nest, {out.ptr}, [&](const std::vector<llvm::Value*>& idx) {
      outer = idx;
      for (int64_t k = 0; k < whole; ++k) vector_block(i64(k * lanes), nullptr);
      if (rest > 0) partial_block(i64(whole * lanes), i64(rest));
    }, count);
  } else {
    nest.push_back(blocks);
    parallel_loop_nest(nest, {out.ptr}, [&](const std::vector<llvm::Value*>& idx) {
      outer.assign(idx.begin(), idx.end() - 1);
      llvm::Value* base = b_.CreateMul(idx.back(), i64(lanes), "vec.base", /*HasNUW=*/true, /*HasNSW=*/true);
      if (rest == 0) {
        vector_block(base, nullptr);  // whole blocks only: no partial form to compile
        return;
      }
      llvm::Value* left = b_.CreateSub(count, base);
      if_else(b_.CreateICmpSGE(left, i64(lanes)), [&] { vector_block(base, nullptr); },
              [&] { partial_block(base, left); });
    }, i64(lanes));
  }
  if (stream) store_fence();  // the loop ran on this thread (small) or the pool's threads fenced theirs
  emitting_vectors_ = was;
  streaming_stores_ = was_streaming;
  return true;
}

llvm::Value* Emitter::check_vector(int32_t id, llvm::Value* x, llvm::Value* first, int64_t step, llvm::Value* mask) {
  llvm::Value* bad = not_finite(x);
  if (mask) bad = b_.CreateAnd(bad, mask);
  const PendingCheck check{id, bad, x, first, step};
  if (pending_checks_) pending_checks_->push_back(check);
  else flush_checks({check});
  return x;
}

void Emitter::flush_checks(const std::vector<PendingCheck>& checks) {
  if (checks.empty()) return;
  llvm::Value* any_bad = checks[0].bad;
  for (size_t k = 1; k < checks.size(); ++k) any_bad = b_.CreateOr(any_bad, checks[k].bad);
  exit_if(b_.CreateOrReduce(any_bad), "check", [&] {
    // The error path: the first check in evaluation order with a bad lane, its first bad lane's
    // element and what the value is (selects from the last check to the first).
    llvm::Value* node = i32(checks.back().node_id);
    llvm::Value* element = i64(0);
    llvm::Value* kind = i64(0);
    for (size_t k = checks.size(); k-- > 0;) {
      const PendingCheck& c = checks[k];
      const unsigned lanes = llvm::cast<llvm::FixedVectorType>(c.bad->getType())->getNumElements();
      llvm::Value* bits = b_.CreateBitCast(c.bad, b_.getIntNTy(lanes));
      llvm::Value* lane = b_.CreateZExt(b_.CreateIntrinsic(llvm::Intrinsic::cttz, {bits->getType()}, {bits, b_.getTrue()}),
                                        b_.getInt64Ty());
      llvm::Value* what = non_finite_kind(b_.CreateExtractElement(c.x, lane));
      llvm::Value* hit = b_.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0));
      node = b_.CreateSelect(hit, i32(c.node_id), node);
      element = b_.CreateSelect(hit, c.step ? b_.CreateAdd(c.first, lane) : c.first, element);
      kind = b_.CreateSelect(hit, what, kind);
    }
    b_.CreateCall(runtime("agc_rt_fail"), {ctx_, node, i32(static_cast<int32_t>(FailKind::NonFinite)), element, kind});
  });
}

}  // namespace ag::jit
