// The 16-bit floats in compiled code: float16 and bfloat16 values live in registers and memory
// as their i16 bits, and convert to and from float32 with integer IR that rounds exactly as
// ag/half.h does (nearest, ties to even). No `half`/`bfloat` LLVM types, so no libgcc
// conversion calls on CPUs without F16C, and the same results at every ISA level.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace ag::jit {

// bits: i16 (or a vector of i16); returns float (or the vector of float).
llvm::Value* half_bits_to_float(llvm::IRBuilder<>& b, llvm::Value* bits, bool bfloat);
// f: float (or a vector of float); returns i16 bits (or the vector of i16).
llvm::Value* float_to_half_bits(llvm::IRBuilder<>& b, llvm::Value* f, bool bfloat);

}  // namespace ag::jit
