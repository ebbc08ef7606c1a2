// Emitter basics: types, constants, memory, runtime calls, and the entry function (arguments
// in, results out). Loops, branches and error exits: emitter_control.cpp.
#include "emitter.h"

#include "node_lines.h"

#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <string_view>

namespace ag::jit {

Emitter::Emitter(llvm::Module& module, const Program& program, int vector_bytes, bool node_lines)
    : ctx_ref_(module.getContext()),
      module_(module),
      prog_(program),
      b_(module.getContext()),
      vector_bytes_(vector_bytes),
      node_lines_(node_lines) {}

void Emitter::at_node(int64_t node) {
  if (node_scope_)
    b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_ref_, static_cast<unsigned>(node + 1), 0, node_scope_));
}

// ---- types and constants ----

llvm::Type* Emitter::mem_type(DType d) const {
  switch (d) {
    case DType::Bool: return llvm::Type::getInt8Ty(ctx_ref_);
    case DType::Int32: return llvm::Type::getInt32Ty(ctx_ref_);
    case DType::Int64: return llvm::Type::getInt64Ty(ctx_ref_);
    case DType::Float32: return llvm::Type::getFloatTy(ctx_ref_);
    case DType::Float64: return llvm::Type::getDoubleTy(ctx_ref_);
    case DType::List: return llvm::PointerType::getUnqual(ctx_ref_);
  }
  return nullptr;
}

llvm::Type* Emitter::reg_type(DType d) const {
  return d == DType::Bool ? llvm::Type::getInt1Ty(ctx_ref_) : mem_type(d);
}

llvm::Value* Emitter::constant(DType d, double f, int64_t i) {
  switch (d) {
    case DType::Bool: return b_.getInt1(i != 0);
    case DType::Int32: return b_.getInt32(static_cast<uint32_t>(i));
    case DType::Int64: return b_.getInt64(static_cast<uint64_t>(i));
    case DType::Float32: return llvm::ConstantFP::get(b_.getFloatTy(), static_cast<float>(f));
    case DType::Float64: return llvm::ConstantFP::get(b_.getDoubleTy(), f);
    case DType::List: break;
  }
  return nullptr;
}

std::vector<llvm::Value*> Emitter::static_dims(const Shape& s) {
  std::vector<llvm::Value*> dims;
  for (int64_t d : s) dims.push_back(i64(d));
  return dims;
}

llvm::Value* Emitter::numel(const std::vector<llvm::Value*>& dims) {
  llvm::Value* n = i64(1);
  for (llvm::Value* d : dims) n = b_.CreateMul(n, d);
  return n;
}

llvm::Value* Emitter::byte_size(DType d, const std::vector<llvm::Value*>& dims) {
  return b_.CreateMul(numel(dims), i64(static_cast<int64_t>(dtype_size(d))));
}

bool Emitter::is_const(llvm::Value* v, int64_t c) const {
  auto* ci = llvm::dyn_cast<llvm::ConstantInt>(v);
  return ci && ci->getSExtValue() == c;
}

std::vector<llvm::Value*> Emitter::contiguous_strides(const std::vector<llvm::Value*>& dims) {
  std::vector<llvm::Value*> strides(dims.size());
  llvm::Value* acc = i64(1);
  for (size_t a = dims.size(); a-- > 0;) {
    strides[a] = acc;
    acc = b_.CreateMul(acc, dims[a]);
  }
  return strides;
}

// ---- memory ----

llvm::Value* Emitter::load(DType d, llvm::Value* ptr, llvm::Value* index) {
  llvm::Type* t = mem_type(d);
  llvm::Value* v = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, ptr, index));
  return d == DType::Bool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v;
}

void Emitter::store(DType d, llvm::Value* ptr, llvm::Value* index, llvm::Value* v) {
  llvm::Type* t = mem_type(d);
  if (d == DType::Bool) v = b_.CreateZExt(v, t);
  b_.CreateStore(v, b_.CreateInBoundsGEP(t, ptr, index));
}

llvm::Value* Emitter::stack_alloc(int64_t bytes) {
  llvm::IRBuilder<> eb(entry_, entry_->begin());
  llvm::AllocaInst* a = eb.CreateAlloca(llvm::ArrayType::get(eb.getInt8Ty(), static_cast<uint64_t>(std::max<int64_t>(bytes, 1))));
  a->setAlignment(llvm::Align(64));
  return a;
}

// A null buffer means the allocation failed: the cold path records which value it was for (its
// op, shape and line) and the call returns.
llvm::Value* Emitter::owned_alloc(llvm::Value* bytes, const AllocSite& site) {
  llvm::Value* p = b_.CreateCall(runtime("agc_rt_alloc"), {ctx_, bytes});
  return_if_out_of_memory(p, site);
  return p;
}

void Emitter::return_if_out_of_memory(llvm::Value* p, const AllocSite& site) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx_ref_, "out_of_memory", fn);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_ref_, "ok", fn);
  llvm::MDBuilder md(ctx_ref_);
  b_.CreateCondBr(b_.CreateIsNull(p), fail, ok, md.createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(fail);
  if (site.node >= 0) {
    llvm::Value* dims = llvm::ConstantPointerNull::get(b_.getPtrTy());
    if (site.dims && !site.dims->empty()) {
      dims = stack_alloc(static_cast<int64_t>(site.dims->size() * sizeof(int64_t)));
      for (size_t d = 0; d < site.dims->size(); ++d) store(DType::Int64, dims, i64(static_cast<int64_t>(d)), (*site.dims)[d]);
    }
    b_.CreateCall(runtime("agc_rt_out_of_memory"),
                  {ctx_, i32(site.node), i32(static_cast<int32_t>(site.output)), dims, i64(site.block_bytes)});
  }
  b_.CreateRet(i32(1));
  b_.SetInsertPoint(ok);
}

void Emitter::owned_free(llvm::Value* ptr) { b_.CreateCall(runtime("agc_rt_free"), {ctx_, ptr}); }

void Emitter::copy_bytes(llvm::Value* dst, llvm::Value* src, llvm::Value* bytes) {
  if (is_const(bytes, 0)) return;
  b_.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), bytes);
}

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

void Emitter::copy_value(const LVal& v, llvm::Value* dst) {
  if (v.kind == LVal::Kind::Reg) store(v.dtype, dst, i64(0), v.reg);
  else if (v.kind == LVal::Kind::Buf) copy_bytes(dst, v.ptr, byte_size(v.dtype, v.dims));
  else throw InternalError("jit: copy_value of a value without a buffer");
}

// ---- runtime ----

namespace {
// A row of rt_helpers.def.
struct RtHelper {
  std::string_view name;
  RtType result;
  std::vector<RtType> params;
  bool pure;
};

const std::vector<RtHelper>& rt_helpers() {
  using enum RtType;
  static const std::vector<RtHelper> helpers = {
#define AG_RT_HELPER(Name, Result, Params, Pure, Address) {#Name, Result, {AG_RT_UNPAREN Params}, Pure},
#include "../rt_helpers.def"
  };
  return helpers;
}
}  // namespace

llvm::Type* Emitter::rt_type(RtType t) {
  switch (t) {
    case RtType::Void: return b_.getVoidTy();
    case RtType::I32: return b_.getInt32Ty();
    case RtType::I64: return b_.getInt64Ty();
    case RtType::Ptr:
    case RtType::Ctx:
    case RtType::Args: return b_.getPtrTy();
  }
  throw InternalError("jit: rt_type");
}

llvm::FunctionCallee Emitter::runtime(const char* name) {
  const auto& helpers = rt_helpers();
  const auto it = std::find_if(helpers.begin(), helpers.end(), [&](const RtHelper& h) { return h.name == name; });
  if (it == helpers.end()) throw InternalError("jit: " + std::string(name) + " is not in rt_helpers.def");
  std::vector<llvm::Type*> params;
  for (RtType p : it->params) params.push_back(rt_type(p));
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, llvm::FunctionType::get(rt_type(it->result), params, false));
  auto* f = llvm::cast<llvm::Function>(callee.getCallee());
  f->setDoesNotThrow();
  if (it->pure) {
    f->setDoesNotAccessMemory();
    f->setWillReturn();
  }
  return callee;
}

llvm::Value* Emitter::ctx_field(CtxField f) {
  llvm::Value* p = b_.CreateInBoundsGEP(b_.getPtrTy(), ctx_, i64(static_cast<int>(f)));
  return b_.CreateLoad(b_.getPtrTy(), p);
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

}  // namespace ag::jit
