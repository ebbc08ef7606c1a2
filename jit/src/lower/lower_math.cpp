// Transcendental functions. They are emitted as LLVM math intrinsics (exp, log, sin, cos, pow) or
// calls to libm's tanh/tanhf marked as not touching memory, so the loop vectorizer can replace
// them with glibc's libmvec variants (see optimizer.cpp for the vector-library table).
#include "emitter.h"

namespace ag::jit {

llvm::Value* Emitter::math_call(OpKind op, DType d, llvm::Value* x) {
  llvm::Type* t = x->getType();
  auto unary = [&](llvm::Intrinsic::ID id, llvm::Value* v) { return b_.CreateIntrinsic(id, {t}, {v}); };
  switch (op) {
    case OpKind::Exp: return unary(llvm::Intrinsic::exp, x);
    case OpKind::Log: return unary(llvm::Intrinsic::log, x);
    case OpKind::Sin: return unary(llvm::Intrinsic::sin, x);
    case OpKind::Cos: return unary(llvm::Intrinsic::cos, x);
    case OpKind::Sigmoid: {
      // 1 / (1 + exp(-x)): exp vectorizes; exp(-x) = inf for very negative x gives exactly 0.
      llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
      return b_.CreateFDiv(one, b_.CreateFAdd(one, unary(llvm::Intrinsic::exp, b_.CreateFNeg(x))));
    }
    case OpKind::Tanh: {
      const char* name = d == DType::Float32 ? "tanhf" : "tanh";
      llvm::FunctionCallee f = b_.GetInsertBlock()->getModule()->getOrInsertFunction(name, llvm::FunctionType::get(t, {t}, false));
      auto* fn = llvm::cast<llvm::Function>(f.getCallee());
      fn->setDoesNotAccessMemory();
      fn->setDoesNotThrow();
      fn->setWillReturn();
      llvm::CallInst* call = b_.CreateCall(f, {x});
      call->setDoesNotAccessMemory();
      return call;
    }
    default: break;
  }
  throw InternalError("jit: math_call on " + std::string(op_name(op)));
}

}  // namespace ag::jit
