// The plan of a concrete function printed on its graph: each value's storage class and the
// fused group (the loop nest) it is computed in, as text and as Graphviz DOT with one cluster per
// group. Written by AG_DUMP next to the runtime's graph dumps. No LLVM.
#pragma once

#include <string>
#include <vector>

#include "plan.h"

namespace ag::jit {

// The graph text with a note per node: "[fused, group=%5]", "[dest 0, group=%5]", "[arena]"...
// group=%N: the node is computed in the loop nest that materializes %N (%N itself included).
std::string plan_graph_text(const Program& program);
// By global node id (ScopePlan::node_id), the node's name in graph_to_dot: "n3" at the top
// level, "n3s1_n2" for node 2 of sub-graph 1 of node 3 (one plan per If/While instance).
std::vector<std::string> plan_node_keys(const Program& program);
// Graphviz DOT with each fused group drawn as a box.
std::string plan_graph_dot(const Program& program);

}  // namespace ag::jit
