// What the gradient rules of staged if (rules_control.cpp) and staged while (while_gradient.cpp)
// share.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "rules.h"

namespace ag::detail {

// The floating-point Variables the graphs read, each once.
std::vector<std::shared_ptr<VariableState>> variables_of(std::span<const std::shared_ptr<const Graph>> graphs);

// The positions of the values a gradient can flow through (floating point, or arrays of them).
std::vector<size_t> floating_positions(std::span<const Tensor> xs);

// The node's input gradients `result` and its Variables' gradients `variable_grads` (reported to
// the tape), keeping only those a reached output depends on: the others get none, as in
// TensorFlow (the staged backward computes zeros for them).
std::vector<Tensor> connected_only(const GradContext& c, std::vector<Tensor> result,
                                   const std::vector<std::shared_ptr<VariableState>>& variables,
                                   std::span<const Tensor> variable_grads);

// The gradient of a staged while loop (while_gradient.cpp).
std::vector<Tensor> while_gradient(const GradContext& c);

}  // namespace ag::detail
