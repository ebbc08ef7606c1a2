// See split_residuals.h.
#include "split_residuals.h"

#include <map>

namespace ag::detail {

ForwardBackward split_residuals(const Graph& joint, size_t num_x, size_t num_grads) {
  const size_t n = joint.nodes.size();
  // A node is backward when it reads a dy (directly or through other nodes).
  std::vector<bool> backward(n, false);
  for (size_t p = num_x; p < joint.params.size(); ++p) backward[joint.params[p]] = true;
  for (uint32_t id = 0; id < n; ++id)
    for (ValueId v : joint.nodes[id].inputs)
      if (backward[v.node]) backward[id] = true;

  // The residuals: forward values the backward reads or returns, in first-use order.
  std::vector<ValueId> residuals;
  std::map<std::pair<uint32_t, uint32_t>, size_t> residual_index;
  auto note = [&](ValueId v) {
    if (backward[v.node]) return;
    if (residual_index.emplace(std::pair{v.node, v.index}, residuals.size()).second) residuals.push_back(v);
  };
  for (uint32_t id = 0; id < n; ++id)
    if (backward[id])
      for (ValueId v : joint.nodes[id].inputs) note(v);
  for (size_t r = 0; r < num_grads; ++r) note(joint.results[r]);

  ForwardBackward out;
  // The forward: the forward nodes in order, returning y..., residuals...
  std::vector<uint32_t> in_forward(n, UINT32_MAX);
  for (uint32_t id = 0; id < n; ++id) {
    if (backward[id]) continue;
    Node node = joint.nodes[id];
    for (ValueId& v : node.inputs) v.node = in_forward[v.node];
    in_forward[id] = static_cast<uint32_t>(out.forward.nodes.size());
    if (node.op == OpKind::Placeholder) out.forward.params.push_back(in_forward[id]);
    out.forward.nodes.push_back(std::move(node));
  }
  for (size_t r = num_grads; r < joint.results.size(); ++r)
    out.forward.results.push_back({in_forward[joint.results[r].node], joint.results[r].index});
  for (ValueId v : residuals) out.forward.results.push_back({in_forward[v.node], v.index});

  // The backward: a parameter per residual, then the dy's, then the backward nodes.
  std::vector<uint32_t> in_backward(n, UINT32_MAX);
  std::vector<ValueId> residual_param;
  for (ValueId v : residuals) residual_param.push_back(out.backward.add_param(joint.type(v), joint.nodes[v.node].loc));
  for (size_t p = num_x; p < joint.params.size(); ++p) {
    const Node& dy = joint.nodes[joint.params[p]];
    in_backward[joint.params[p]] = out.backward.add_param(dy.outputs[0], dy.loc).node;
  }
  auto mapped = [&](ValueId v) -> ValueId {
    if (backward[v.node]) return {in_backward[v.node], v.index};
    return residual_param[residual_index.at({v.node, v.index})];
  };
  for (uint32_t id = 0; id < n; ++id) {
    if (!backward[id] || joint.nodes[id].op == OpKind::Placeholder) continue;
    Node node = joint.nodes[id];
    for (ValueId& v : node.inputs) v = mapped(v);
    in_backward[id] = static_cast<uint32_t>(out.backward.nodes.size());
    out.backward.nodes.push_back(std::move(node));
  }
  for (size_t r = 0; r < num_grads; ++r) out.backward.results.push_back(mapped(joint.results[r]));
  out.num_residuals = residuals.size();
  return out;
}

}  // namespace ag::detail
