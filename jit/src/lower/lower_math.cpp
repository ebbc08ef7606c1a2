// Transcendental functions. They are emitted as LLVM math intrinsics (exp, log, sin, cos, pow) or
// calls to libm (tanh, erf, erfc, log1p, expm1, the trigonometric and hyperbolic functions and
// their inverses, atan2) marked as not touching memory, so the loop vectorizer can replace them
// with glibc's libmvec variants (see optimizer.cpp for the vector-library table); float32 tanh is
// a rational approximation in IR. In agc's own vector code (vector loops, row and column
// reductions), which skips the loop vectorizer, they call libmvec's variants directly
// (vector_math_call): a softmax's exp over rows of 16 floats had been 16 scalar expf calls a row.
#include "emitter.h"

#include <fmt/format.h>
#include <llvm/IR/Module.h>

#include <bit>
#include <llvm/TargetParser/Triple.h>

namespace ag::jit {

// The libm function (double; float adds "f") of an op computed by one, or null.
const char* Emitter::libm_name(OpKind op) {
  switch (op) {
    case OpKind::Erf: return "erf";
    case OpKind::Erfc: return "erfc";
    case OpKind::Log1p: return "log1p";
    case OpKind::Expm1: return "expm1";
    case OpKind::Tan: return "tan";
    case OpKind::Atan: return "atan";
    case OpKind::Asin: return "asin";
    case OpKind::Acos: return "acos";
    case OpKind::Sinh: return "sinh";
    case OpKind::Cosh: return "cosh";
    case OpKind::Asinh: return "asinh";
    case OpKind::Acosh: return "acosh";
    case OpKind::Atanh: return "atanh";
    case OpKind::Atan2: return "atan2";
    default: return nullptr;
  }
}

bool Emitter::has_libmvec(const llvm::Module& module) {
  const llvm::Triple triple(module.getTargetTriple());
  return triple.getArch() == llvm::Triple::x86_64 && triple.isOSLinux() && triple.isGNUEnvironment();
}

llvm::Value* Emitter::vector_math_call(const char* name, DType d, llvm::Value* x) {
  auto* vt = llvm::cast<llvm::FixedVectorType>(x->getType());
  const unsigned lanes = vt->getNumElements();
  const unsigned per_register = static_cast<unsigned>(vector_bytes_) / static_cast<unsigned>(dtype_size(d));
  const std::string libm = std::string(name) + (d == DType::Float32 ? "f" : "");
  // Whole registers, a power of two of them (the pieces are joined pairwise); else lane by lane.
  if (!has_vector_math() || lanes % per_register != 0 || !std::has_single_bit(lanes / per_register)) {
    llvm::Value* out = llvm::PoisonValue::get(vt);
    for (unsigned l = 0; l < lanes; ++l)
      out = b_.CreateInsertElement(out, libm_call(libm.c_str(), b_.CreateExtractElement(x, l)), l);
    return out;
  }
  // The vector function ABI's ISA letter for the register: SSE4 'b', AVX2 'd', AVX-512 'e'.
  const char isa = vector_bytes_ == 64 ? 'e' : vector_bytes_ == 32 ? 'd' : 'b';
  auto* rt = llvm::FixedVectorType::get(vt->getElementType(), per_register);
  llvm::FunctionCallee f = module_.getOrInsertFunction(fmt::format("_ZGV{}N{}v_{}", isa, per_register, libm),
                                                       llvm::FunctionType::get(rt, {rt}, false));
  auto* fn = llvm::cast<llvm::Function>(f.getCallee());
  fn->setDoesNotAccessMemory();
  fn->setDoesNotThrow();
  fn->setWillReturn();
  // The caller passes and takes whole registers (zmm on AVX-512), as the variant expects.
  b_.GetInsertBlock()->getParent()->addFnAttr("min-legal-vector-width", std::to_string(8 * vector_bytes_));
  auto call = [&](llvm::Value* v) {
    llvm::CallInst* c = b_.CreateCall(f, {v});
    c->setDoesNotAccessMemory();
    return c;
  };
  if (lanes == per_register) return call(x);
  std::vector<llvm::Value*> pieces;
  for (unsigned first = 0; first < lanes; first += per_register) {
    llvm::SmallVector<int, 16> take;
    for (unsigned l = 0; l < per_register; ++l) take.push_back(static_cast<int>(first + l));
    pieces.push_back(call(b_.CreateShuffleVector(x, take)));
  }
  llvm::SmallVector<int, 64> all;
  for (unsigned l = 0; l < lanes; ++l) all.push_back(static_cast<int>(l));
  while (pieces.size() > 1) {  // concatenate pairwise (pieces of equal width)
    std::vector<llvm::Value*> joined;
    for (size_t k = 0; k < pieces.size(); k += 2) {
      const unsigned width = llvm::cast<llvm::FixedVectorType>(pieces[k]->getType())->getNumElements();
      joined.push_back(b_.CreateShuffleVector(pieces[k], pieces[k + 1], llvm::ArrayRef<int>(all).take_front(2 * width)));
    }
    pieces = std::move(joined);
  }
  return pieces[0];
}

llvm::Value* Emitter::math_call(OpKind op, DType d, llvm::Value* x) {
  llvm::Type* t = x->getType();
  // An intrinsic on scalars (and on the vectors LLVM's vectorizer makes of them); libmvec on
  // agc's own vectors.
  auto unary = [&](llvm::Intrinsic::ID id, llvm::Value* v) -> llvm::Value* {
    if (t->isVectorTy()) {
      const char* name = id == llvm::Intrinsic::exp ? "exp" : id == llvm::Intrinsic::log ? "log"
                         : id == llvm::Intrinsic::sin ? "sin" : id == llvm::Intrinsic::cos ? "cos" : nullptr;
      if (name) return vector_math_call(name, d, v);
    }
    return b_.CreateIntrinsic(id, {t}, {v});
  };
  switch (op) {
    case OpKind::Exp: return unary(llvm::Intrinsic::exp, x);
    case OpKind::Log: return unary(llvm::Intrinsic::log, x);
    case OpKind::Sin: return unary(llvm::Intrinsic::sin, x);
    case OpKind::Cos: return unary(llvm::Intrinsic::cos, x);
    case OpKind::Sigmoid: {
      // e = exp(-|x|); x >= 0: 1 / (1 + e), else e / (1 + e) — the eager kernel's formula: a few
      // ULPs everywhere, denormal results included (1 / (1 + exp(-x)) is 0 below -88 in float32).
      // exp vectorizes; NaN propagates through e.
      llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
      llvm::Value* e = unary(llvm::Intrinsic::exp, b_.CreateFNeg(unary(llvm::Intrinsic::fabs, x)));
      llvm::Value* denominator = b_.CreateFAdd(one, e);
      llvm::Value* nonnegative = b_.CreateFCmpOGE(x, llvm::ConstantFP::get(t, 0.0));
      return b_.CreateSelect(nonnegative, b_.CreateFDiv(one, denominator), b_.CreateFDiv(e, denominator));
    }
    case OpKind::Softplus: {
      // max(x, 0) + log1p(e), e = exp(-|x|), as the eager kernel; log1p(e) as
      // log(u) * e / (u - 1) with u = 1 + e (exact where u rounds to 1: then e), so it
      // vectorizes through the log intrinsic. NaN propagates through e.
      llvm::Value* e = unary(llvm::Intrinsic::exp, b_.CreateFNeg(unary(llvm::Intrinsic::fabs, x)));
      llvm::Value* u = b_.CreateFAdd(llvm::ConstantFP::get(t, 1.0), e);
      llvm::Value* um1 = b_.CreateFSub(u, llvm::ConstantFP::get(t, 1.0));
      llvm::Value* log1p = b_.CreateSelect(b_.CreateFCmpOEQ(um1, llvm::ConstantFP::get(t, 0.0)), e,
                                           b_.CreateFDiv(b_.CreateFMul(unary(llvm::Intrinsic::log, u), e), um1));
      llvm::Value* positive = b_.CreateIntrinsic(llvm::Intrinsic::maxnum, {t}, {x, llvm::ConstantFP::get(t, 0.0)});
      return b_.CreateFAdd(positive, log1p);
    }
    case OpKind::Tanh:
      if (d == DType::Float32) return tanh_f32(x);
      return t->isVectorTy() ? vector_math_call("tanh", d, x) : libm_call("tanh", x);
    default:
      if (const char* name = libm_name(op)) {
        if (t->isVectorTy()) return vector_math_call(name, d, x);
        return libm_call((std::string(name) + (d == DType::Float32 ? "f" : "")).c_str(), x);
      }
      break;
  }
  throw InternalError("jit: math_call on " + std::string(op_name(op)));
}

// A call of libm's `name` (the eager kernel's function), marked as not touching memory so that
// LLVM may hoist, merge or vectorize it.
llvm::Value* Emitter::libm_call(const char* name, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  std::vector<llvm::Type*> params(y ? 2 : 1, t);
  llvm::FunctionCallee f = b_.GetInsertBlock()->getModule()->getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
  auto* fn = llvm::cast<llvm::Function>(f.getCallee());
  fn->setDoesNotAccessMemory();
  fn->setDoesNotThrow();
  fn->setWillReturn();
  llvm::CallInst* call = y ? b_.CreateCall(f, {x, y}) : b_.CreateCall(f, {x});
  call->setDoesNotAccessMemory();
  return call;
}

// tanh for float32 as the 13/6 rational approximation Eigen uses (generic_fast_tanh_float, FMA
// variant): plain arithmetic the vectorizer turns into 16-wide code, several times faster than
// libmvec's tanhf and within a few ULPs (see docs/jit.md). NaN propagates.
llvm::Value* Emitter::tanh_f32(llvm::Value* a) {
  llvm::Type* t = a->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto fma = [&](llvm::Value* x, llvm::Value* y, llvm::Value* z) { return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {x, y, z}); };
  llvm::Value* x = b_.CreateIntrinsic(llvm::Intrinsic::maxnum, {t},
                                      {b_.CreateIntrinsic(llvm::Intrinsic::minnum, {t}, {a, c(7.99881172180175781)}), c(-7.99881172180175781)});
  llvm::Value* x2 = b_.CreateFMul(x, x);
  llvm::Value* p = fma(x2, c(-2.76076847742355e-16), c(2.00018790482477e-13));
  for (double alpha : {-8.60467152213735e-11, 5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03})
    p = fma(x2, p, c(static_cast<float>(alpha)));
  p = b_.CreateFMul(x, p);
  llvm::Value* q = fma(x2, c(1.19825839466702e-06), c(1.18534705686654e-04));
  q = fma(x2, q, c(2.26843463243900e-03));
  q = fma(x2, q, c(4.89352518554385e-03));
  llvm::Value* r = b_.CreateFDiv(p, q);
  // a itself where |a| < 0.0004 (the float nearest tanh(a)) or a is NaN (which the clamp above
  // turned into a number): one unordered compare instead of a compare, a NaN test and an or,
  // 2 of the 24 vector operations a block of W3's heavy chain costs (agc's vector loops skip
  // InstCombine, which would not fold them either: one compare is on |a|, the other on a).
  llvm::Value* keep = b_.CreateFCmpULT(b_.CreateIntrinsic(llvm::Intrinsic::fabs, {t}, {a}), c(0.0004));
  return b_.CreateSelect(keep, a, r);
}

}  // namespace ag::jit
