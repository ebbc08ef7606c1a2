// float16 / bfloat16 <-> float32 as integer IR (half_ir.h), branch-free so the loop vectorizer
// takes a cast loop whole. The algorithms are ag/half.h's, written with selects.
#include "half_ir.h"

namespace ag::jit {
namespace {

// A constant of v's integer type (or a splat of it for vectors).
llvm::Value* k(llvm::Value* like, uint32_t c) { return llvm::ConstantInt::get(like->getType(), c); }

llvm::Type* with_element(llvm::Type* like, llvm::Type* elem) {
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(like)) return llvm::VectorType::get(elem, vt->getElementCount());
  return elem;
}

}  // namespace

llvm::Value* half_bits_to_float(llvm::IRBuilder<>& b, llvm::Value* bits, bool bfloat) {
  llvm::Type* i32 = with_element(bits->getType(), b.getInt32Ty());
  llvm::Type* f32 = with_element(bits->getType(), b.getFloatTy());
  llvm::Value* h = b.CreateZExt(bits, i32);
  if (bfloat) return b.CreateBitCast(b.CreateShl(h, k(h, 16)), f32);
  llvm::Value* sign = b.CreateShl(b.CreateAnd(h, k(h, 0x8000)), k(h, 16));
  llvm::Value* e = b.CreateAnd(b.CreateLShr(h, k(h, 10)), k(h, 0x1F));
  llvm::Value* m = b.CreateAnd(h, k(h, 0x3FF));
  llvm::Value* m_shifted = b.CreateShl(m, k(h, 13));
  llvm::Value* normal = b.CreateOr(b.CreateOr(sign, b.CreateShl(b.CreateAdd(e, k(h, 112)), k(h, 23))), m_shifted);
  llvm::Value* inf_nan = b.CreateOr(b.CreateOr(sign, k(h, 0x7F800000)), m_shifted);
  // A subnormal is m * 2^-24, exact in float; its sign ORed in (m = 0 gives a signed zero).
  llvm::Value* sub_value = b.CreateFMul(b.CreateUIToFP(m, f32), llvm::ConstantFP::get(f32, 0x1p-24));
  llvm::Value* subnormal = b.CreateOr(b.CreateBitCast(sub_value, i32), sign);
  llvm::Value* r = b.CreateSelect(b.CreateICmpEQ(e, k(h, 0x1F)), inf_nan,
                                  b.CreateSelect(b.CreateICmpEQ(e, k(h, 0)), subnormal, normal));
  return b.CreateBitCast(r, f32);
}

llvm::Value* float_to_half_bits(llvm::IRBuilder<>& b, llvm::Value* f, bool bfloat) {
  llvm::Type* i32 = with_element(f->getType(), b.getInt32Ty());
  llvm::Type* i16 = with_element(f->getType(), b.getInt16Ty());
  llvm::Value* x = b.CreateBitCast(f, i32);
  llvm::Value* ax = b.CreateAnd(x, k(x, 0x7FFFFFFF));
  llvm::Value* is_nan = b.CreateICmpUGT(ax, k(x, 0x7F800000));
  if (bfloat) {
    llvm::Value* lsb = b.CreateAnd(b.CreateLShr(x, k(x, 16)), k(x, 1));
    llvm::Value* rounded = b.CreateLShr(b.CreateAdd(b.CreateAdd(x, k(x, 0x7FFF)), lsb), k(x, 16));
    llvm::Value* nan = b.CreateOr(b.CreateLShr(x, k(x, 16)), k(x, 0x40));
    return b.CreateTrunc(b.CreateSelect(is_nan, nan, rounded), i16);
  }
  llvm::Value* sign = b.CreateAnd(b.CreateLShr(x, k(x, 16)), k(x, 0x8000));
  // Rounds q (the kept bits) by rem against halfway, ties to even.
  auto round = [&](llvm::Value* q, llvm::Value* rem, llvm::Value* halfway) {
    llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, k(q, 1)), k(q, 0));
    llvm::Value* up = b.CreateOr(b.CreateICmpUGT(rem, halfway), b.CreateAnd(b.CreateICmpEQ(rem, halfway), odd));
    return b.CreateAdd(q, b.CreateZExt(up, q->getType()));
  };
  // Normal: the exponent rebiased from 127 to 15, 13 mantissa bits rounded off.
  llvm::Value* r = b.CreateSub(ax, k(x, 0x38000000));
  llvm::Value* normal = round(b.CreateLShr(r, k(x, 13)), b.CreateAnd(r, k(x, 0x1FFF)), k(x, 0x1000));
  // Subnormal (2^-25 < |f| < 2^-14): the 24-bit significand shifted right by 14..24 (the shift
  // clamped so that lanes taking another branch compute no poison).
  llvm::Value* shift = b.CreateSub(k(x, 126), b.CreateLShr(ax, k(x, 23)));
  shift = b.CreateSelect(b.CreateICmpUGT(shift, k(x, 24)), k(x, 24), shift);
  shift = b.CreateSelect(b.CreateICmpULT(shift, k(x, 14)), k(x, 14), shift);
  llvm::Value* m = b.CreateOr(b.CreateAnd(ax, k(x, 0x7FFFFF)), k(x, 0x800000));
  llvm::Value* mask = b.CreateSub(b.CreateShl(k(x, 1), shift), k(x, 1));
  llvm::Value* subnormal = round(b.CreateLShr(m, shift), b.CreateAnd(m, mask), b.CreateShl(k(x, 1), b.CreateSub(shift, k(x, 1))));
  llvm::Value* v = b.CreateSelect(b.CreateICmpULT(ax, k(x, 0x38800000)), subnormal, normal);
  v = b.CreateSelect(b.CreateICmpULT(ax, k(x, 0x33000000)), k(x, 0), v);
  v = b.CreateSelect(b.CreateICmpUGE(ax, k(x, 0x477FF000)), k(x, 0x7C00), v);
  v = b.CreateSelect(is_nan, k(x, 0x7E00), v);
  return b.CreateTrunc(b.CreateOr(v, sign), i16);
}

}  // namespace ag::jit
