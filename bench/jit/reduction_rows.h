// W3's reduction rows of jit_bench (reduction_rows.cpp).
#pragma once

#include <vector>

#include "ag/tensor.h"

namespace bench {

// Prints the rows for x (float32 [n]; the column sums view it as 4096 rows when n is 16M); y is
// scratch of n floats for the baselines; the pool size is left at 2.
void reduction_rows(int reps, const ag::Tensor& x, std::vector<float>& y, int iters);

}  // namespace bench
