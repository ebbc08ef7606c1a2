// Reductions split over the thread pool (lower_reduce_parallel.cpp): a full reduction of a large
// operand in fixed chunks (or blocks of rows), a column reduction in fixed blocks of rows. Each
// cut depends on the shape alone, never on the thread count, so neither does the result.
#pragma once

#include "emitter.h"

namespace ag::jit {

// One reduction being lowered (lower_reduce.cpp): node i of `s` reduces `x`, walked by `w`, with
// `combine` from `init`.
struct ReductionSite {
  Scope& s;
  uint32_t i;
  ValueId x;
  const Walk& w;
  DType d;
  llvm::Value* init;
  std::function<llvm::Value*(llvm::Value*, llvm::Value*)> combine;
};

// The reduction of every element into acc[0], split when the operand is large. True when it
// emitted the reduction (calling `serial`, the caller's walk, for sizes known only at run time
// that turn out small); false when the caller emits the serial walk.
bool lower_parallel_full_reduction(Emitter& e, const ReductionSite& r, llvm::Value* acc,
                                   const std::function<void()>& serial);
// out[j] = reduce over r of x[r, j], into `acc_view` (the output seen with the operand's rank),
// split in blocks of rows; true and false as above.
bool lower_parallel_column_reduction(Emitter& e, const ReductionSite& r, const LVal& acc_view,
                                     const std::function<void()>& serial);

}  // namespace ag::jit
