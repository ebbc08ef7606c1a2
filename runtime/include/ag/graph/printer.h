// Text and Graphviz forms of a graph. The text form is stable (goldens depend on it):
//   graph f(%0: f32[2,?]) -> (f32[2,?]) {
//     %1 = Relu(%0) : f32[2,?]        # f.cpp:3
//     return %1
//   }
#pragma once

#include <string>

#include "ag/graph/graph.h"

namespace ag {

std::string graph_to_text(const Graph& g);
std::string graph_to_dot(const Graph& g);
// "{axis=1, keepdims}" for a node's attributes ("" when it has none).
std::string attrs_to_text(const Node& n);

}  // namespace ag
