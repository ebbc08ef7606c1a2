// The algebra of a reduction op, shared by its loops (lower_reduce.cpp, lower_reduce_parallel.cpp)
// and its inline form (lower_inline_reduction.cpp).
#pragma once

#include "emitter.h"

namespace ag::jit {

// The accumulator's first value: 0, 1, true, false, or the identity of a max or min.
llvm::Value* reduction_initial_value(Emitter& e, OpKind op, DType d);
// acc op v, with float sums and products reassociable (like Eigen's vectorized sums: the loop
// vectorizer may use vector accumulators); a float max or min propagates NaN (IEEE's maximum).
llvm::Value* reduction_combine(llvm::IRBuilder<>& b, OpKind op, bool fp, llvm::Value* a, llvm::Value* v);

}  // namespace ag::jit
