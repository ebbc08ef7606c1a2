// Pruning (non-strict execution): only what the results or a side effect need is kept.
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {

bool has_side_effects(const Node& n) {
  if (op_info(n.op).stateful) return true;
  for (const auto& sub : n.subgraphs)
    if (has_side_effects(*sub)) return true;
  return false;
}

bool has_side_effects(const Graph& g) {
  for (const Node& n : g.nodes)
    if (has_side_effects(n)) return true;
  return false;
}

bool contains_op(const Graph& g, OpKind op) {
  for (const Node& n : g.nodes) {
    if (n.op == op) return true;
    for (const auto& sub : n.subgraphs)
      if (contains_op(*sub, op)) return true;
  }
  return false;
}

Graph prune(const Graph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  for (ValueId r : g.results) live[r.node] = true;
  for (uint32_t p : g.params) live[p] = true;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (op_info(n.op).stateful) live[id] = true;
    for (const auto& sub : n.subgraphs)
      if (has_side_effects(*sub)) live[id] = true;
  }
  for (uint32_t id = static_cast<uint32_t>(g.nodes.size()); id-- > 0;)
    if (live[id])
      for (ValueId v : g.nodes[id].inputs) live[v.node] = true;
  return detail::rebuild(g, [&](detail::GraphRebuilder& rb, uint32_t id) {
    if (!live[id]) return;
    Node n = rb.remapped(id);
    rb.emit(id, detail::with_transformed_subgraphs(std::move(n), &prune));
  });
}

}  // namespace ag
