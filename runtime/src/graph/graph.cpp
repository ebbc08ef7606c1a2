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

bool may_raise_on_values(const Node& n) {
  switch (op_info(n.op).raises) {
    case RaiseKind::never:
    case RaiseKind::dims: return false;
    case RaiseKind::values: return true;
    case RaiseKind::int_values: return !n.outputs.empty() && is_integer(n.outputs[0].dtype);
  }
  return true;
}

bool may_raise(const Graph& g, const Node& n) {
  if (may_raise_on_values(n)) return true;
  if (op_info(n.op).raises == RaiseKind::never) return false;
  for (ValueId v : n.inputs) {
    const TensorType& t = g.type(v);
    if (t.rank_unknown) return true;
    for (int64_t d : t.shape)
      if (d < 0) return true;
  }
  return false;
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
