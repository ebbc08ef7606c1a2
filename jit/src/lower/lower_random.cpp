// The counter-based random stream in IR, for draws fused into the loop that consumes them
// (plan.h, is_inlined_draw). Element k of a draw is word counter + k of the stream of its
// generator's seed, computed exactly as the per-ISA kernel does (runtime/src/ops/isa/random.cpp):
// the same 64-bit mixer, an exact u64 -> double conversion, a multiply and an add in double
// with no contraction into an FMA (this IR carries no fast-math flags), and the same clamp below
// maxval. A fused draw is therefore bit for bit the eager one, and never written to memory.
#include <cmath>

#include "emitter.h"

namespace ag::jit {

llvm::Value* Emitter::stream_mix(llvm::Value* x) {
  auto shift_xor = [&](llvm::Value* v, uint64_t s) { return b_.CreateXor(v, b_.CreateLShr(v, b_.getInt64(s))); };
  x = b_.CreateAdd(x, b_.getInt64(0x9e3779b97f4a7c15ull));
  x = b_.CreateMul(shift_xor(x, 30), b_.getInt64(0xbf58476d1ce4e5b9ull));
  x = b_.CreateMul(shift_xor(x, 27), b_.getInt64(0x94d049bb133111ebull));
  return shift_xor(x, 31);
}

llvm::Value* Emitter::uniform_element(const Node& n, const LVal& draw, llvm::Value* k) {
  const double minval = n.attrs.scalar, maxval = n.attrs.scalar2;
  llvm::Value* word = stream_mix(b_.CreateXor(draw.reg, b_.CreateAdd(draw.counter, k)));
  llvm::Value* u = b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(word, b_.getInt64(11)), b_.getDoubleTy()),
                                 llvm::ConstantFP::get(b_.getDoubleTy(), 0x1.0p-53));
  llvm::Value* x = b_.CreateFAdd(llvm::ConstantFP::get(b_.getDoubleTy(), minval),
                                 b_.CreateFMul(u, llvm::ConstantFP::get(b_.getDoubleTy(), maxval - minval)));
  const DType d = draw.dtype;
  llvm::Type* t = d == DType::Float32 ? b_.getFloatTy() : b_.getDoubleTy();
  llvm::Value* v = d == DType::Float32 ? b_.CreateFPTrunc(x, t) : x;
  // As the kernel: a value rounded up to maxval becomes the largest value below it.
  const auto clamp = [&](auto hi, auto lo) {
    const auto below = std::nextafter(hi, lo);
    if (!(hi > lo && below >= lo)) return v;
    llvm::Value* at_top = b_.CreateFCmpOGE(v, llvm::ConstantFP::get(t, static_cast<double>(hi)));
    return b_.CreateSelect(at_top, llvm::ConstantFP::get(t, static_cast<double>(below)), v);
  };
  return d == DType::Float32 ? clamp(static_cast<float>(maxval), static_cast<float>(minval)) : clamp(maxval, minval);
}

}  // namespace ag::jit
