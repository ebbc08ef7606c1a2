// Functions that ag_add_aot_library's SOURCES form traces and compiles (tests/aot: test_functions).
#pragma once

#include <ag/ag.h>

namespace aot_test {

// Steps of the Collatz sequence from n to 1: a tensor while with an if (rewritten by ag-rewrite).
ag::Tensor collatz_steps(ag::Tensor n);
// A smoothed clamp of x to [-limit, limit], elementwise, with a tensor if on the whole batch.
ag::Tensor soft_clamp(ag::Tensor x, ag::Tensor limit);

}  // namespace aot_test
