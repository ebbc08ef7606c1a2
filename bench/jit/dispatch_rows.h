// W4's rows of jit_bench (dispatch_rows.cpp).
#pragma once

#include <string>

namespace bench {

// The cached call of x + 1 on one element, ns per call (also what `jit_bench --w4-call reps`
// prints for the row measured in a process of its own).
double w4_cached_call(int reps);
// Prints W4's rows; `self` is jit_bench's own path (one row runs it with AG_HAZARD_FENCES=1).
void dispatch_rows(const std::string& self, int reps);

}  // namespace bench
