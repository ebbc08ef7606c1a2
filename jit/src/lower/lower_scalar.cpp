// One element of an elementwise op, with exactly the eager kernels' semantics: wrapping integer
// arithmetic, C++ truncating / and % (x / -1 defined for INT_MIN), floor division, NaN-propagating
// maximum/minimum, saturating float->int casts, half-to-even round, checked division and powers.
#include "ag/detail/check_numerics.h"
#include "emitter.h"
#include "half_ir.h"

namespace ag::jit {
namespace {

llvm::Value* cast_value(Emitter& e, DType from, DType to, llvm::Value* x) {
  llvm::IRBuilder<>& b = e.b();
  if (from == to) return x;
  // The 16-bit floats convert through float32, as ag::detail::convert_value does.
  if (from == DType::Float16 || from == DType::BFloat16)
    return cast_value(e, DType::Float32, to, half_bits_to_float(b, x, from == DType::BFloat16));
  if (to == DType::Float16 || to == DType::BFloat16)
    return float_to_half_bits(b, cast_value(e, from, DType::Float32, x), to == DType::BFloat16);
  llvm::Type* t = e.reg_type(to);
  // Lanes of a vector convert alike (a While run element by element: lower_per_element_while.cpp).
  if (auto* lanes = llvm::dyn_cast<llvm::FixedVectorType>(x->getType())) t = llvm::FixedVectorType::get(t, lanes->getNumElements());
  if (to == DType::Bool)
    return is_floating(from) ? b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                             : b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  if (from == DType::Bool) return is_floating(to) ? b.CreateUIToFP(x, t) : b.CreateZExt(x, t);
  if (is_integer(from) && is_integer(to)) return is_unsigned(from) ? b.CreateZExtOrTrunc(x, t) : b.CreateSExtOrTrunc(x, t);
  if (is_integer(from)) return is_unsigned(from) ? b.CreateUIToFP(x, t) : b.CreateSIToFP(x, t);
  if (is_integer(to))
    return b.CreateIntrinsic(is_unsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                             {t, x->getType()}, {x});
  return to == DType::Float64 ? b.CreateFPExt(x, t) : b.CreateFPTrunc(x, t);
}

llvm::Value* compare(llvm::IRBuilder<>& b, OpKind op, bool fp, llvm::Value* x, llvm::Value* y) {
  using P = llvm::CmpInst::Predicate;
  P p = P::ICMP_EQ;
  switch (op) {
    case OpKind::Less: p = fp ? P::FCMP_OLT : P::ICMP_SLT; break;
    case OpKind::LessEqual: p = fp ? P::FCMP_OLE : P::ICMP_SLE; break;
    case OpKind::Greater: p = fp ? P::FCMP_OGT : P::ICMP_SGT; break;
    case OpKind::GreaterEqual: p = fp ? P::FCMP_OGE : P::ICMP_SGE; break;
    case OpKind::Equal: p = fp ? P::FCMP_OEQ : P::ICMP_EQ; break;
    default: p = fp ? P::FCMP_UNE : P::ICMP_NE; break;
  }
  return fp ? b.CreateFCmp(p, x, y) : b.CreateICmp(p, x, y);
}

}  // namespace

llvm::Value* Emitter::scalar_op(const Node& n, int32_t id, DType in, const std::vector<llvm::Value*>& a) {
  llvm::Value* v = scalar_value(n, id, in, a);
  const std::string& bug = program().config.test_miscompile;
  if (!bug.empty() && bug == op_name(n.op) &&
      (n.outputs[0].dtype == DType::Float32 || n.outputs[0].dtype == DType::Float64)) [[unlikely]]
    v = b_.CreateFAdd(v, llvm::ConstantFP::get(v->getType(), 1.0));  // the tests' deliberate bug (jit_config.h)
  return v;
}

llvm::Value* Emitter::scalar_value(const Node& n, int32_t id, DType in, const std::vector<llvm::Value*>& a) {
  const bool fp = is_floating(in);
  const DType out = n.outputs[0].dtype;
  auto zero = [&](llvm::Value* like) { return llvm::Constant::getNullValue(like->getType()); };
  auto intrinsic = [&](llvm::Intrinsic::ID iid, std::vector<llvm::Value*> args) {
    return b_.CreateIntrinsic(iid, {args[0]->getType()}, args);
  };
  switch (n.op) {
    case OpKind::Neg: return fp ? b_.CreateFNeg(a[0]) : b_.CreateSub(zero(a[0]), a[0]);
    case OpKind::Abs: return fp ? intrinsic(llvm::Intrinsic::fabs, {a[0]}) : intrinsic(llvm::Intrinsic::abs, {a[0], b_.getFalse()});
    case OpKind::Square: return fp ? b_.CreateFMul(a[0], a[0]) : b_.CreateMul(a[0], a[0]);
    case OpKind::Relu:
      return b_.CreateSelect(fp ? b_.CreateFCmpOLT(a[0], zero(a[0])) : b_.CreateICmpSLT(a[0], zero(a[0])), zero(a[0]), a[0]);
    case OpKind::Sign: {
      llvm::Value* pos = fp ? b_.CreateFCmpOGT(a[0], zero(a[0])) : b_.CreateICmpSGT(a[0], zero(a[0]));
      llvm::Value* neg = fp ? b_.CreateFCmpOLT(a[0], zero(a[0])) : b_.CreateICmpSLT(a[0], zero(a[0]));
      if (!fp) return b_.CreateSub(b_.CreateZExt(pos, a[0]->getType()), b_.CreateZExt(neg, a[0]->getType()));
      llvm::Value* nan_or_zero = b_.CreateSelect(b_.CreateFCmpUNO(a[0], a[0]), a[0], zero(a[0]));
      return b_.CreateSelect(pos, llvm::ConstantFP::get(a[0]->getType(), 1.0),
                             b_.CreateSelect(neg, llvm::ConstantFP::get(a[0]->getType(), -1.0), nan_or_zero));
    }
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Tanh:
    case OpKind::Sigmoid:
    case OpKind::Softplus:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Erf:
    case OpKind::Erfc:
    case OpKind::Log1p:
    case OpKind::Expm1:
    case OpKind::Tan:
    case OpKind::Atan:
    case OpKind::Asin:
    case OpKind::Acos:
    case OpKind::Sinh:
    case OpKind::Cosh:
    case OpKind::Asinh:
    case OpKind::Acosh:
    case OpKind::Atanh: return math_call(n.op, in, a[0]);
    case OpKind::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, {a[0]});
    case OpKind::Rsqrt:
      return b_.CreateFDiv(llvm::ConstantFP::get(a[0]->getType(), 1.0), intrinsic(llvm::Intrinsic::sqrt, {a[0]}));
    case OpKind::Floor: return intrinsic(llvm::Intrinsic::floor, {a[0]});
    case OpKind::Ceil: return intrinsic(llvm::Intrinsic::ceil, {a[0]});
    case OpKind::Round: return intrinsic(llvm::Intrinsic::roundeven, {a[0]});
    case OpKind::LogicalNot: return b_.CreateNot(a[0]);
    case OpKind::Cast: return cast_value(*this, in, n.attrs.dtype, a[0]);
    case OpKind::Add: return fp ? b_.CreateFAdd(a[0], a[1]) : b_.CreateAdd(a[0], a[1]);
    case OpKind::Sub: return fp ? b_.CreateFSub(a[0], a[1]) : b_.CreateSub(a[0], a[1]);
    case OpKind::Mul: return fp ? b_.CreateFMul(a[0], a[1]) : b_.CreateMul(a[0], a[1]);
    case OpKind::Atan2: return libm_call(in == DType::Float32 ? "atan2f" : "atan2", a[0], a[1]);
    case OpKind::Maximum: return intrinsic(fp ? llvm::Intrinsic::maximum : llvm::Intrinsic::smax, {a[0], a[1]});
    case OpKind::Minimum: return intrinsic(fp ? llvm::Intrinsic::minimum : llvm::Intrinsic::smin, {a[0], a[1]});
    case OpKind::Pow:
      if (fp) return b_.CreateIntrinsic(llvm::Intrinsic::pow, {a[0]->getType()}, {a[0], a[1]});
      fail_if(b_.CreateICmpSLT(a[1], zero(a[1])), id, FailKind::NegativePower, a[1]);
      return b_.CreateCall(runtime(in == DType::Int32 ? "agc_rt_ipow_i32" : "agc_rt_ipow_i64"), {a[0], a[1]});
    case OpKind::Div:
    case OpKind::Mod:
    case OpKind::FloorDiv:
    case OpKind::FloorMod: {
      llvm::Value* x = a[0];
      llvm::Value* z = a[1];
      if (fp) {
        if (n.op == OpKind::Div) return b_.CreateFDiv(x, z);
        if (n.op == OpKind::FloorDiv) return intrinsic(llvm::Intrinsic::floor, {b_.CreateFDiv(x, z)});
        llvm::Value* r = b_.CreateFRem(x, z);
        if (n.op == OpKind::Mod) return r;
        llvm::Value* fix = b_.CreateAnd(b_.CreateFCmpUNE(r, zero(r)),
                                        b_.CreateXor(b_.CreateFCmpOLT(r, zero(r)), b_.CreateFCmpOLT(z, zero(z))));
        return b_.CreateSelect(fix, b_.CreateFAdd(r, z), r);
      }
      fail_if(b_.CreateICmpEQ(z, zero(z)), id, FailKind::DivisionByZero);
      // x / -1 and x % -1 are spelled out (INT_MIN / -1 traps); the divisor is then never -1 or 0.
      llvm::Value* minus_one = b_.CreateICmpEQ(z, llvm::ConstantInt::getSigned(z->getType(), -1));
      llvm::Value* safe = b_.CreateSelect(minus_one, llvm::ConstantInt::get(z->getType(), 1), z);
      llvm::Value* q = b_.CreateSDiv(x, safe);
      llvm::Value* r = b_.CreateSRem(x, safe);
      llvm::Value* neg_x = b_.CreateSub(zero(x), x);
      switch (n.op) {
        case OpKind::Div: return b_.CreateSelect(minus_one, neg_x, q);
        case OpKind::Mod: return b_.CreateSelect(minus_one, zero(x), r);
        case OpKind::FloorDiv: {
          llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero(r)),
                                             b_.CreateXor(b_.CreateICmpSLT(x, zero(x)), b_.CreateICmpSLT(z, zero(z))));
          llvm::Value* floored = b_.CreateSelect(adjust, b_.CreateSub(q, llvm::ConstantInt::get(q->getType(), 1)), q);
          return b_.CreateSelect(minus_one, neg_x, floored);
        }
        default: {
          llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero(r)),
                                             b_.CreateXor(b_.CreateICmpSLT(r, zero(r)), b_.CreateICmpSLT(z, zero(z))));
          return b_.CreateSelect(minus_one, zero(x), b_.CreateSelect(adjust, b_.CreateAdd(r, z), r));
        }
      }
    }
    case OpKind::Less:
    case OpKind::LessEqual:
    case OpKind::Greater:
    case OpKind::GreaterEqual:
    case OpKind::Equal:
    case OpKind::NotEqual: return compare(b_, n.op, fp, a[0], a[1]);
    case OpKind::LogicalAnd: return b_.CreateAnd(a[0], a[1]);
    case OpKind::LogicalOr: return b_.CreateOr(a[0], a[1]);
    case OpKind::LogicalXor: return b_.CreateXor(a[0], a[1]);
    case OpKind::Select: return b_.CreateSelect(a[0], a[1], a[2]);
    case OpKind::CheckNumerics: return check_element(id, a[0], nullptr);
    case OpKind::Fill: return a[0];
    case OpKind::FillLike: return constant(out, n.attrs.scalar, static_cast<int64_t>(n.attrs.scalar));
    default: break;
  }
  throw InternalError("jit: scalar_op on " + std::string(op_name(n.op)));
}

llvm::Value* Emitter::not_finite(llvm::Value* x) {
  // x - x is 0 exactly when x is finite (NaN - NaN and inf - inf are NaN): one compare, on
  // scalars and vectors alike.
  return b_.CreateFCmpUNE(b_.CreateFSub(x, x), llvm::Constant::getNullValue(x->getType()));
}

llvm::Value* Emitter::non_finite_kind(llvm::Value* x) {
  llvm::Value* zero = llvm::ConstantFP::get(x->getType(), 0.0);
  return b_.CreateSelect(
      b_.CreateFCmpUNO(x, x), i64(static_cast<int64_t>(detail::NonFiniteKind::NaN)),
      b_.CreateSelect(b_.CreateFCmpOGT(x, zero), i64(static_cast<int64_t>(detail::NonFiniteKind::PositiveInf)),
                      i64(static_cast<int64_t>(detail::NonFiniteKind::NegativeInf))));
}

llvm::Value* Emitter::check_element(int32_t id, llvm::Value* x, llvm::Value* index) {
  exit_if(not_finite(x), "check", [&] {  // what the value is: worked out on the error path only
    b_.CreateCall(runtime("agc_rt_fail"), {ctx_, i32(id), i32(static_cast<int32_t>(FailKind::NonFinite)),
                                           index ? index : i64(-1), non_finite_kind(x)});
  });
  return x;
}

}  // namespace ag::jit
