// Text and Graphviz forms of a graph. The text form is stable (goldens depend on it):
//   graph f(%0: f32[2,?]) -> (f32[2,?]) {
//     %1 = Relu(%0) : f32[2,?]        # f.cpp:3
//     return %1
//   }
#pragma once

#include <functional>
#include <string>

#include "ag/graph/graph.h"

namespace ag {

// How a Const's value is printed: Short elides long values with "..." (dumps, reports); Full
// prints every element, exactly (what graph_from_text reads back: parser.h).
enum class ConstantText { Short, Full };

std::string graph_to_text(const Graph& g, ConstantText constants = ConstantText::Short);
std::string graph_to_dot(const Graph& g);

// What a backend decided about each node (the JIT's fused groups and storage), printed with the
// graph. Each callback gets the graph or sub-graph being printed and a node index.
struct GraphNotes {
  // Appended to the node's text line as "[<note>]" when not empty.
  std::function<std::string(const Graph&, uint32_t)> text;
  // DOT: the nodes of one (sub-)graph with the same non-empty cluster name are drawn in one box
  // labelled with it.
  std::function<std::string(const Graph&, uint32_t)> cluster;
};
std::string graph_to_text(const Graph& g, const GraphNotes& notes);
std::string graph_to_dot(const Graph& g, const GraphNotes& notes);
// "{axis=1, keepdims}" for a node's attributes ("" when it has none).
std::string attrs_to_text(const Node& n, ConstantText constants = ConstantText::Short);

}  // namespace ag
