// See variable_binding.h.
#include "variable_binding.h"

namespace ag::detail {

std::shared_ptr<const Graph> rebind_variables(const std::shared_ptr<const Graph>& g, const VariableRebinding& r) {
  std::shared_ptr<Graph> copy;  // made on the first change
  for (size_t id = 0; id < g->nodes.size(); ++id) {
    const Node& n = g->nodes[id];
    const std::shared_ptr<VariableState>* bound = n.attrs.variable ? r.find(n.attrs.variable.get()) : nullptr;
    std::vector<std::shared_ptr<const Graph>> subgraphs = n.subgraphs;
    bool sub_changed = false;
    for (auto& sub : subgraphs) {
      std::shared_ptr<const Graph> rebound = rebind_variables(sub, r);
      sub_changed |= rebound != sub;
      sub = std::move(rebound);
    }
    if (!bound && !sub_changed) continue;
    if (!copy) copy = std::make_shared<Graph>(*g);
    Node& m = copy->nodes[id];
    if (bound) m.attrs.variable = *bound;
    if (sub_changed) m.subgraphs = std::move(subgraphs);
  }
  return copy ? std::shared_ptr<const Graph>(std::move(copy)) : g;
}

}  // namespace ag::detail
