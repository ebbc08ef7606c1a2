// Functions that ag_add_aot_library's SOURCES form traces and compiles (tests/aot: test_functions).
#pragma once

#include <ag/ag.h>

namespace aot_test {

// Steps of the Collatz sequence from n to 1: a tensor while with an if (rewritten by ag-rewrite).
ag::Tensor collatz_steps(ag::Tensor n);
// A smoothed clamp of x to [-limit, limit], elementwise, with a tensor if on the whole batch.
ag::Tensor soft_clamp(ag::Tensor x, ag::Tensor limit);
// h = (x_t W + h U) / 2 over the steps t of xs [steps, batch, in] from h = 0: a staged loop whose
// products by W and U read them packed once before the loop (docs/jit.md, "Weights packed before
// their loop").
ag::Tensor rnn_final_state(ag::Tensor xs, ag::Tensor w, ag::Tensor u);

}  // namespace aot_test
