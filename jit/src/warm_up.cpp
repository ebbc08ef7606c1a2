// The warm-up module (Engine::warm_up): a small function with the shapes of code agc emits — a
// vectorizable float loop with a fused multiply-add and a max, an integer loop with a select,
// a call of a runtime helper — so optimizing and compiling it runs, once, the LLVM code a real
// compile runs first (pages of libLLVM, lazily built tables), on a thread of its own.
#include "warm_up.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace ag::jit {

std::unique_ptr<llvm::Module> warm_up_module(llvm::LLVMContext& ctx, const llvm::DataLayout& layout,
                                             const std::string& triple) {
  auto m = std::make_unique<llvm::Module>("agc.warm_up", ctx);
  m->setDataLayout(layout);
  m->setTargetTriple(triple);
  llvm::IRBuilder<> b(ctx);
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();
  // void agc_warm_up(float* a, const float* x, int32_t* k, int64_t n)
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i64}, false),
                                    llvm::Function::ExternalLinkage, "agc_warm_up", *m);
  for (unsigned i = 0; i < 3; ++i) fn->addParamAttr(i, llvm::Attribute::NoAlias);
  llvm::Value *a = fn->getArg(0), *x = fn->getArg(1), *k = fn->getArg(2), *n = fn->getArg(3);
  llvm::FunctionCallee helper = m->getOrInsertFunction("agc_rt_warm_up", llvm::FunctionType::get(b.getVoidTy(), {ptr}, false));

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* floats = llvm::BasicBlock::Create(ctx, "floats", fn);
  auto* ints = llvm::BasicBlock::Create(ctx, "ints", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), floats, done);

  // a[i] = max(a[i] * x[i] + 1, 0)
  b.SetInsertPoint(floats);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* pa = b.CreateInBoundsGEP(f32, a, i);
  llvm::Value* v = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f32},
                                     {b.CreateLoad(f32, pa), b.CreateLoad(f32, b.CreateInBoundsGEP(f32, x, i)),
                                      llvm::ConstantFP::get(f32, 1.0)});
  b.CreateStore(b.CreateMaxNum(v, llvm::ConstantFP::get(f32, 0.0)), pa);
  llvm::Value* next_i = b.CreateNSWAdd(i, b.getInt64(1));
  i->addIncoming(next_i, floats);
  b.CreateCondBr(b.CreateICmpSLT(next_i, n), floats, ints);

  // k[j] = k[j] odd ? 3 * k[j] + 1 : k[j] / 2
  b.SetInsertPoint(ints);
  llvm::PHINode* j = b.CreatePHI(i64, 2);
  j->addIncoming(b.getInt64(0), floats);
  llvm::Value* pk = b.CreateInBoundsGEP(i32, k, j);
  llvm::Value* kv = b.CreateLoad(i32, pk);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(kv, b.getInt32(1)), b.getInt32(0));
  b.CreateStore(b.CreateSelect(odd, b.CreateAdd(b.CreateMul(kv, b.getInt32(3)), b.getInt32(1)), b.CreateSDiv(kv, b.getInt32(2))), pk);
  llvm::Value* next_j = b.CreateNSWAdd(j, b.getInt64(1));
  j->addIncoming(next_j, ints);
  b.CreateCondBr(b.CreateICmpSLT(next_j, n), ints, done);

  b.SetInsertPoint(done);
  b.CreateCall(helper, {a});
  b.CreateRetVoid();
  return m;
}

}  // namespace ag::jit
