// Graph construction.
#include "ag/graph/graph.h"

#include <fmt/format.h>

#include "ag/detail/ops_internal.h"

namespace ag {

ValueId Graph::add(Node n) {
  nodes.push_back(std::move(n));
  return {static_cast<uint32_t>(nodes.size() - 1), 0};
}

ValueId Graph::add_param(TensorType type, SourceLoc loc) {
  Node n;
  n.op = OpKind::Placeholder;
  n.attrs.param_index() = static_cast<int64_t>(params.size());
  n.outputs = {std::move(type)};
  n.loc = loc;
  ValueId v = add(std::move(n));
  params.push_back(v.node);
  return v;
}

std::string first_unknown_rank_value(const Graph& g) {
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    for (const TensorType& t : n.outputs)
      if (t.has_unknown_rank()) return fmt::format("%{} ({}{})", id, t.str(), detail::at(n.loc));
    for (const auto& sub : n.subgraphs)
      if (std::string v = first_unknown_rank_value(*sub); !v.empty()) return v;
  }
  return {};
}

}  // namespace ag
