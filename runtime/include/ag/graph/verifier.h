// Structural checks of a graph; a failure is an agc bug (InternalError), never a user error.
#pragma once

#include "ag/graph/graph.h"

namespace ag {

// Inputs refer to earlier nodes, params are Placeholders, If/While sub-graphs match their
// node, every non-control node's type agrees with its op's type rule.
void verify_graph(const Graph& g);

}  // namespace ag
