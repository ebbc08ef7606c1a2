// W5c of jit_bench (shared_kernel_rows.cpp): the first call of a second Function whose kernels a
// first one compiled, with the kernels shared across compiles (the default) and without.
#pragma once

namespace bench {

void shared_kernel_rows();

}  // namespace bench
