// Elementwise fusion on the graph. A value fuses into its consumer when that consumer computes
// element by element (another elementwise op, or a reduction reading it as its operand) and
// fusing does not duplicate work: it has one consumer node, or it is a fill (a constant).
#include "fusion.h"

#include <algorithm>

#include "ag/graph/passes.h"

namespace ag::jit {
namespace {

bool consumes_elementwise(const Node& n, uint32_t input) {
  if (is_elementwise_expr(n.op)) return n.op != OpKind::FillLike;  // FillLike reads only a shape
  const OpClass c = op_class(n.op);
  return (c == OpClass::Reduce || c == OpClass::ArgReduce) && input == 0;
}

bool is_fill(OpKind op) { return op == OpKind::Fill || op == OpKind::FillLike; }

// Integer ops that raise on bad data: moving them past a side effect would reorder the error
// and the side effect.
bool can_raise(const Node& n) {
  const bool int_result = !n.outputs.empty() && is_integer(n.outputs[0].dtype);
  switch (n.op) {
    case OpKind::Div:
    case OpKind::Mod:
    case OpKind::FloorDiv:
    case OpKind::FloorMod:
    case OpKind::Pow: return int_result;
    default: return false;
  }
}

bool has_effects(const Node& n) {
  if (op_info(n.op).stateful) return true;
  for (const auto& sub : n.subgraphs)
    if (has_side_effects(*sub)) return true;
  return false;
}

}  // namespace

void fuse_elementwise(const Graph& g, std::vector<std::vector<ValuePlan>>& values) {
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  // Consumers of each node's first output (elementwise nodes have exactly one output).
  std::vector<std::vector<uint32_t>> consumers(n);
  std::vector<bool> fusible_uses(n, true);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& c = g.nodes[i];
    for (uint32_t k = 0; k < c.inputs.size(); ++k) {
      const ValueId v = c.inputs[k];
      if (v.index != 0) continue;
      if (consumers[v.node].empty() || consumers[v.node].back() != i) consumers[v.node].push_back(i);
      if (!consumes_elementwise(c, k) || values[i][0].storage == Storage::Reg) fusible_uses[v.node] = false;
    }
  }
  std::vector<bool> is_result(n, false);
  for (ValueId r : g.results) is_result[r.node] = true;
  // Prefix count of side-effecting nodes, to ask "is there one between i and j".
  std::vector<uint32_t> effects_before(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) effects_before[i + 1] = effects_before[i] + (has_effects(g.nodes[i]) ? 1 : 0);

  for (uint32_t i = 0; i < n; ++i) {
    const Node& p = g.nodes[i];
    if (!is_elementwise_expr(p.op) || p.outputs.size() != 1 || is_result[i] || !fusible_uses[i]) continue;
    ValuePlan& vp = values[i][0];
    if (vp.storage != Storage::Arena && vp.storage != Storage::Owned) continue;
    if (consumers[i].empty()) continue;
    if (consumers[i].size() > 1 && !is_fill(p.op)) continue;
    if (can_raise(p)) {
      const uint32_t last = *std::max_element(consumers[i].begin(), consumers[i].end());
      if (effects_before[last] != effects_before[i + 1]) continue;
    }
    vp.storage = Storage::Fused;
  }
}

}  // namespace ag::jit
