// The emitter's values (registers and buffers, their allocation and results) and the entry
// function (arguments in, results out). The codegen context under it: codegen.cpp.
#include "emitter.h"

#include "node_lines.h"
#include "../plan_updates.h"

#include <algorithm>

namespace ag::jit {

// ---- values ----

LVal Emitter::as_buffer(const LVal& v) {
  if (v.kind != LVal::Kind::Reg) return v;
  LVal out = v;
  out.kind = LVal::Kind::Buf;
  out.ptr = stack_alloc(static_cast<int64_t>(dtype_size(v.dtype)));
  store(v.dtype, out.ptr, i64(0), v.reg);
  out.reg = nullptr;
  return out;
}

std::vector<llvm::Value*> Emitter::described_dims(const TensorType& t, llvm::Value* dims_ptr) {
  std::vector<llvm::Value*> dims;
  for (int64_t d = 0; d < t.shape.rank(); ++d)
    dims.push_back(t.shape[d] >= 0 ? i64(t.shape[d]) : static_cast<llvm::Value*>(load(DType::Int64, dims_ptr, i64(d))));
  return dims;
}

LVal Emitter::described_value(const TensorType& t, llvm::Value* data, llvm::Value* dims_ptr) {
  LVal v;
  v.dtype = t.dtype;
  v.dims = described_dims(t, dims_ptr);
  if (is_register_type(t)) {
    v.kind = LVal::Kind::Reg;
    v.reg = load(t.dtype, data, i64(0));
  } else {
    v.kind = LVal::Kind::Buf;
    v.ptr = data;
  }
  return v;
}

llvm::Value* Emitter::as_register(const LVal& v) {
  return v.kind == LVal::Kind::Reg ? v.reg : load(v.dtype, v.ptr, i64(0));
}

llvm::Value* Emitter::allocate_value(Scope& s, ValueId v, const std::vector<llvm::Value*>& dims) {
  const ValuePlan& vp = s.plan->at(v);
  const DType d = s.type(v).dtype;
  switch (vp.storage) {
    case ValueStorage::Arena: return b_.CreateInBoundsGEP(b_.getInt8Ty(), s.arena, i64(vp.offset));
    case ValueStorage::Owned: return owned_alloc(byte_size(d, dims), s.site(v, dims));
    case ValueStorage::Dest: {
      const Sink& sink = s.sinks.at(static_cast<size_t>(vp.dest));
      switch (sink.kind) {
        case Sink::Kind::Static: return sink.ptr;
        case Sink::Kind::Owned: return owned_alloc(byte_size(d, dims), s.site(v, dims));
        case Sink::Kind::Output: return output_buffer(sink.index, dims, s.site(v, dims));
        case Sink::Kind::None: break;
      }
      break;
    }
    default: break;
  }
  throw InternalError("jit: allocate_value for a value without a buffer of its own");
}

llvm::Value* Emitter::output_buffer(int32_t index, const std::vector<llvm::Value*>& dims, const AllocSite& site) {
  llvm::Value* p = b_.CreateCall(runtime("agc_rt_output"), {ctx_, i32(index), numel(dims)});
  return_if_out_of_memory(p, site);
  return p;
}

llvm::Value* Emitter::result_buffer(Scope& s, uint32_t i, const std::vector<llvm::Value*>& dims) {
  if (s.plan->values[i][0].storage == ValueStorage::Reg) return stack_alloc(8);
  return allocate_value(s, {i, 0}, dims);
}

void Emitter::finish_result(Scope& s, uint32_t i, LVal out, llvm::Value* ptr) {
  if (s.plan->values[i][0].storage == ValueStorage::Reg) {
    out.kind = LVal::Kind::Reg;
    out.reg = load(out.dtype, ptr, i64(0));
    out.ptr = nullptr;
  } else {
    out.kind = LVal::Kind::Buf;
    out.ptr = ptr;
  }
  s.values[i] = {std::move(out)};
}

llvm::Value* Emitter::update_buffer(Scope& s, uint32_t i) {
  for (const auto& [node, ptr] : s.update_buffers)
    if (node == i) return ptr;
  llvm::Value* ptr = nullptr;
  if (s.plan->values[i][0].storage == ValueStorage::Box) {  // a concat in its place in another's (a contiguous run)
    LVal place;
    place.dtype = s.graph().nodes[i].outputs[0].dtype;
    box_destination(s, i, place);
    ptr = place.ptr;
  } else {
    ptr = result_buffer(s, i, static_dims(s.graph().nodes[i].outputs[0].shape));
  }
  s.update_buffers.emplace_back(i, ptr);
  return ptr;
}

void Emitter::box_destination(Scope& s, uint32_t i, LVal& out) {
  const uint32_t update = s.plan->values[i][0].root.node;
  const Node& u = s.graph().nodes[update];
  out.strides = contiguous_strides(static_dims(u.outputs[0].shape));
  std::vector<llvm::Value*> begin;
  if (u.op == OpKind::Concat) {  // a piece: its place along the axis, after the pieces before it
    const int64_t axis = concat_axis(u);
    int64_t at = 0;
    for (ValueId piece : u.inputs) {
      if (piece.node == i) break;
      at += s.type(piece).shape[axis];
    }
    for (int64_t k = 0; k < u.outputs[0].shape.rank(); ++k) begin.push_back(i64(k == axis ? at : 0));
  } else {
    for (int64_t b : u.attrs.slice_begin()) begin.push_back(i64(b));
  }
  out.ptr = b_.CreateInBoundsGEP(mem_type(out.dtype), update_buffer(s, update), linear_offset(out.strides, begin));
}

void Emitter::copy_value(const LVal& v, llvm::Value* dst) {
  if (v.kind == LVal::Kind::Reg) store(v.dtype, dst, i64(0), v.reg);
  else if (v.kind == LVal::Kind::Buf) copy_bytes(dst, v.ptr, byte_size(v.dtype, v.dims));
  else throw InternalError("jit: copy_value of a value without a buffer");
}

// ---- the entry function ----

void Emitter::emit_entry() {
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, kEntrySymbol, module_);
  fn_->setDoesNotThrow();
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  args_ = fn_->getArg(0);
  ctx_ = fn_->getArg(1);
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  fn_->addParamAttr(1, llvm::Attribute::NoAlias);
  entry_ = llvm::BasicBlock::Create(ctx_ref_, "entry", fn_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_ref_, "body", fn_);
  b_.SetInsertPoint(body);
  if (node_lines_) node_scope_ = add_node_line_scope(module_, *fn_);
  at_node(-1);

  const Graph& g = *prog_.graph;
  Scope root;
  root.plan = prog_.root.get();
  constexpr int64_t kMaxStackArena = 64 * 1024;
  const int64_t arena = root.plan->arena_bytes;
  const bool heap_arena = arena > kMaxStackArena;
  if (arena > 0) {
    const AllocSite site{root.plan->largest_node, root.plan->largest_output, nullptr, arena};
    root.arena = heap_arena ? owned_alloc(i64(arena), site) : stack_alloc(arena);
  }

  std::vector<LVal> params;
  for (size_t p = 0; p < g.params.size(); ++p) {
    const TensorType& t = g.nodes[g.params[p]].outputs[0];
    LVal v;
    v.dtype = t.dtype;
    if (t.dtype == DType::List) {
      v.kind = LVal::Kind::Slot;
      v.slot = prog_.param_slots[p];
      params.push_back(v);
      continue;
    }
    llvm::Value* arg = b_.CreateInBoundsGEP(b_.getPtrTy(), args_, i64(static_cast<int64_t>(2 * p)));
    llvm::Value* data = b_.CreateLoad(b_.getPtrTy(), arg);
    llvm::Value* dims_ptr = b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(b_.getPtrTy(), arg, i64(1)));
    params.push_back(described_value(t, data, dims_ptr));
  }

  llvm::Value* out_data = prog_.results.empty() ? nullptr : ctx_field(CtxField::OutData);
  for (size_t k = 0; k < prog_.results.size(); ++k) {
    const ResultPlan& r = prog_.results[k];
    Sink sink;
    if (r.kind == ResultKind::Computed) {
      if (r.static_shape) {
        sink.kind = Sink::Kind::Static;
        sink.ptr = b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(b_.getPtrTy(), out_data, i64(static_cast<int64_t>(k))));
        aligned_results_.insert(sink.ptr);  // make_tensor's buffers are 64-byte aligned (tensor.h)
      } else {
        sink.kind = Sink::Kind::Output;
        sink.index = static_cast<int32_t>(k);
      }
    }
    root.sinks.push_back(sink);
  }

  lower_nodes(root, params);
  at_node(-1);
  emit_results(root);
  release_scope(root);
  if (heap_arena) owned_free(root.arena);
  b_.CreateRet(i32(0));

  b_.SetInsertPoint(entry_);
  b_.CreateBr(body);
  outline_parallel_loops();
}

void Emitter::emit_results(Scope& root) {
  const Graph& g = *prog_.graph;
  llvm::Value* out_dims = g.results.empty() ? nullptr : ctx_field(CtxField::OutDims);
  for (size_t k = 0; k < g.results.size(); ++k) {
    const LVal v = deliver_result(root, k);
    for (size_t d = 0; d < v.dims.size(); ++d)
      store(DType::Int64, out_dims, i64(static_cast<int64_t>(k * kMaxRank + d)), v.dims[d]);
  }
}

void NodeLowering::fill_arg(llvm::Value* arg, const LVal& v) {
  const LVal buf = e_.as_buffer(v);
  llvm::Value* dims = e_.stack_alloc(static_cast<int64_t>(std::max<size_t>(buf.dims.size(), 1) * 8));
  for (size_t d = 0; d < buf.dims.size(); ++d) e_.store(DType::Int64, dims, e_.i64(static_cast<int64_t>(d)), buf.dims[d]);
  b_.CreateStore(buf.ptr, arg);
  b_.CreateStore(dims, b_.CreateInBoundsGEP(b_.getPtrTy(), arg, e_.i64(1)));
}

llvm::Value* NodeLowering::input_args() {
  const size_t nin = n_.inputs.size();
  llvm::Value* args = e_.stack_alloc(static_cast<int64_t>(std::max<size_t>(nin, 1) * 16));
  for (size_t k = 0; k < nin; ++k)
    fill_arg(b_.CreateInBoundsGEP(b_.getPtrTy(), args, e_.i64(static_cast<int64_t>(2 * k))), s_.at(n_.inputs[k]));
  return args;
}

}  // namespace ag::jit
