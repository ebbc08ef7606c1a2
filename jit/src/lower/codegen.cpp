// The codegen context's basics: types and constants, memory, runtime calls, node locations.
// Loops, branches and error exits: codegen_control.cpp; loop nests the pool splits:
// parallel_loops.cpp.
#include "codegen.h"

#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <string_view>

namespace ag::jit {

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

Codegen::Codegen(llvm::Module& module, const Program& program, int vector_bytes, bool node_lines)
    : ctx_ref_(module.getContext()),
      module_(module),
      prog_(program),
      b_(module.getContext()),
      vector_bytes_(vector_bytes),
      node_lines_(node_lines) {}

void Codegen::at_node(int64_t node) {
  if (node_scope_)
    b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_ref_, static_cast<unsigned>(node + 1), 0, node_scope_));
}

llvm::Type* Codegen::mem_type(DType d) const {
  switch (d) {
    case DType::Bool: return llvm::Type::getInt8Ty(ctx_ref_);
    case DType::Int32: return llvm::Type::getInt32Ty(ctx_ref_);
    case DType::Int64: return llvm::Type::getInt64Ty(ctx_ref_);
    case DType::Float32: return llvm::Type::getFloatTy(ctx_ref_);
    case DType::Float64: return llvm::Type::getDoubleTy(ctx_ref_);
    case DType::List: return llvm::PointerType::getUnqual(ctx_ref_);
    case DType::UInt8:
    case DType::Int8: return llvm::Type::getInt8Ty(ctx_ref_);
    case DType::Float16:  // as their bits (half_ir.h)
    case DType::BFloat16: return llvm::Type::getInt16Ty(ctx_ref_);
  }
  return nullptr;
}

llvm::Type* Codegen::reg_type(DType d) const {
  return d == DType::Bool ? llvm::Type::getInt1Ty(ctx_ref_) : mem_type(d);
}

llvm::Value* Codegen::constant(DType d, double f, int64_t i) {
  switch (d) {
    case DType::Bool: return b_.getInt1(i != 0);
    case DType::Int32: return b_.getInt32(static_cast<uint32_t>(i));
    case DType::Int64: return b_.getInt64(static_cast<uint64_t>(i));
    case DType::Float32: return llvm::ConstantFP::get(b_.getFloatTy(), static_cast<float>(f));
    case DType::Float64: return llvm::ConstantFP::get(b_.getDoubleTy(), f);
    case DType::UInt8:
    case DType::Int8: return b_.getInt8(static_cast<uint8_t>(i));
    case DType::Float16: return b_.getInt16(detail::convert_value<Float16>(f).bits);
    case DType::BFloat16: return b_.getInt16(detail::convert_value<BFloat16>(f).bits);
    case DType::List: break;
  }
  return nullptr;
}

std::vector<llvm::Value*> Codegen::static_dims(const Shape& s) {
  std::vector<llvm::Value*> dims;
  for (int64_t d : s) dims.push_back(i64(d));
  return dims;
}

llvm::Value* Codegen::numel(const std::vector<llvm::Value*>& dims) {
  llvm::Value* n = i64(1);
  for (llvm::Value* d : dims) n = b_.CreateMul(n, d);
  return n;
}

llvm::Value* Codegen::byte_size(DType d, const std::vector<llvm::Value*>& dims) {
  return b_.CreateMul(numel(dims), i64(static_cast<int64_t>(dtype_size(d))));
}

bool Codegen::is_const(llvm::Value* v, int64_t c) const {
  auto* ci = llvm::dyn_cast<llvm::ConstantInt>(v);
  return ci && ci->getSExtValue() == c;
}

std::vector<llvm::Value*> Codegen::contiguous_strides(const std::vector<llvm::Value*>& dims) {
  std::vector<llvm::Value*> strides(dims.size());
  llvm::Value* acc = i64(1);
  for (size_t a = dims.size(); a-- > 0;) {
    strides[a] = acc;
    acc = b_.CreateMul(acc, dims[a]);
  }
  return strides;
}

llvm::Value* Codegen::load(DType d, llvm::Value* ptr, llvm::Value* index) {
  llvm::Type* t = mem_type(d);
  llvm::Value* v = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, ptr, index));
  return d == DType::Bool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v;
}

void Codegen::store(DType d, llvm::Value* ptr, llvm::Value* index, llvm::Value* v) {
  llvm::Type* t = mem_type(d);
  if (d == DType::Bool) v = b_.CreateZExt(v, t);
  b_.CreateStore(v, b_.CreateInBoundsGEP(t, ptr, index));
}

llvm::Value* Codegen::stack_alloc(int64_t bytes) {
  llvm::IRBuilder<> eb(entry_, entry_->begin());
  llvm::AllocaInst* a = eb.CreateAlloca(llvm::ArrayType::get(eb.getInt8Ty(), static_cast<uint64_t>(std::max<int64_t>(bytes, 1))));
  a->setAlignment(llvm::Align(64));
  return a;
}

// A null buffer means the allocation failed: the cold path records which value it was for (its
// op, shape and line) and the call returns.
llvm::Value* Codegen::owned_alloc(llvm::Value* bytes, const AllocSite& site) {
  llvm::Value* p = b_.CreateCall(runtime("agc_rt_alloc"), {ctx_, bytes});
  return_if_out_of_memory(p, site);
  return p;
}

void Codegen::return_if_out_of_memory(llvm::Value* p, const AllocSite& site) {
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

void Codegen::owned_free(llvm::Value* ptr) { b_.CreateCall(runtime("agc_rt_free"), {ctx_, ptr}); }

void Codegen::copy_bytes(llvm::Value* dst, llvm::Value* src, llvm::Value* bytes) {
  if (is_const(bytes, 0)) return;
  b_.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), bytes);
}

llvm::Type* Codegen::rt_type(RtType t) {
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

llvm::FunctionCallee Codegen::runtime(const char* name) {
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

llvm::Value* Codegen::ctx_field(CtxField f) {
  llvm::Value* p = b_.CreateInBoundsGEP(b_.getPtrTy(), ctx_, i64(static_cast<int>(f)));
  return b_.CreateLoad(b_.getPtrTy(), p);
}

llvm::Value* Codegen::linear_offset(const std::vector<llvm::Value*>& strides, const std::vector<llvm::Value*>& idx) {
  llvm::Value* off = i64(0);
  for (size_t j = 0; j < idx.size(); ++j) off = b_.CreateAdd(off, b_.CreateMul(idx[j], strides[j]));
  return off;
}

}  // namespace ag::jit
