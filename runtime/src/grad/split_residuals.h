// Splitting the joint graph of a call's forward and backward (TensorFlow's forward/backward
// pair): the nodes that do not depend on the output gradients form the forward, which also
// returns the residuals, the values the rest reads; the rest forms the backward, which takes the
// residuals and the output gradients. No op runs twice.
#pragma once

#include <cstddef>

#include "ag/graph/graph.h"

namespace ag::detail {

struct ForwardBackward {
  Graph forward;   // (x...) -> (y..., residuals...)
  Graph backward;  // (residuals..., dy...) -> (grads...)
  size_t num_residuals = 0;
};

// `joint`: params (x..., dy...) with `num_x` x's; results (grads..., y...) with `num_grads` grads.
ForwardBackward split_residuals(const Graph& joint, size_t num_x, size_t num_grads);

}  // namespace ag::detail
