// W8b of jit_bench (gradient_rows.cpp): what a second-order gradient costs against the first
// order and the forward, on the W8 MLP's loss, compiled, in the same run.
#pragma once

namespace bench {

void gradient_rows(int reps);

}  // namespace bench
