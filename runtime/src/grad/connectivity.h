// Which inputs a gradient can reach from which outputs, statically: TensorFlow gives a source the
// target is not connected to no gradient (None), not zeros, also through a Function call or a
// staged if/while whose backward computes every input's gradient (zeros where nothing flows).
// Paths run through differentiable ops only: an op whose Gradient is `none` (stop_gradient, a
// comparison, an integer op) cuts them.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ag/graph/graph.h"

namespace ag::detail {

struct VariableState;

// A set of sources, by index.
using SourceSet = std::vector<bool>;

// For each result of `g`: the sources it depends on, which are g's params (indices 0..P-1) and
// then `variables` (P + v: the reads of variables[v] anywhere in g, sub-graphs included).
std::vector<SourceSet> result_sources(const Graph& g, std::span<const std::shared_ptr<VariableState>> variables);

// For each output of an If or While node with `num_inputs` inputs (the If's condition
// included; a While's loop variables first) and sub-graphs `subgraphs`: the inputs (0..N-1)
// and `variables` (N + v) it depends on.
std::vector<SourceSet> control_output_sources(OpKind op, std::span<const std::shared_ptr<const Graph>> subgraphs,
                                              size_t num_inputs, size_t loop_vars,
                                              std::span<const std::shared_ptr<VariableState>> variables);

// The union of `sets[k]` over the outputs k that a gradient reached.
SourceSet reached_sources(const std::vector<SourceSet>& sets, const std::vector<bool>& reached, size_t num_sources);

}  // namespace ag::detail
