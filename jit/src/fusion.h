// The graph-level fusion pass: marks elementwise values that are computed inside the loop of
// the value consuming them, so a chain of elementwise/broadcast/cast ops (and the producers of a
// reduction) becomes one loop nest.
#pragma once

#include <vector>

#include "plan.h"

namespace ag::jit {

// `values` holds the storage chosen so far for every value of `g`; values that fuse into their
// consumer become Storage::Fused. Results and register values never fuse.
void fuse_elementwise(const Graph& g, std::vector<std::vector<ValuePlan>>& values);

}  // namespace ag::jit
