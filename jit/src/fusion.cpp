// Elementwise fusion on the graph. A value fuses into its consumer when that consumer computes
// element by element (another elementwise op, or a reduction reading it as its operand) and
// fusing does not duplicate expensive work:
//   - it has one consumer node, or it is a fill (a constant: reads nothing);
//   - a float RandomUniform draw fuses too (is_inlined_draw): it takes its words where it stands
//     and its consumer computes each element from them (never recomputed by broadcasting);
//   - its group's loop is no larger than the value itself, or the op is cheap to recompute
//     (is_cheap_to_recompute) and the group recomputes at most kMaxRecomputedPerGroup such ops.
// `x[1000,4] + exp(b[4])` therefore computes exp(b) once into a 4-element buffer and the add
// reads it with stride 0, while `x[1000,4] + b[4] * 2` recomputes the multiply in the add's loop.
// Sizes are compared on static dims: an unknown dim is taken not to broadcast.
#include "fusion.h"

#include <algorithm>

#include "ag/graph/passes.h"

namespace ag::jit {
namespace {

bool is_fill(OpKind op) { return op == OpKind::Fill || op == OpKind::FillLike; }

// True when a value of shape `v` evaluated in a loop over `loop` would be computed more than
// once per element (it broadcasts): a dim of `v` that is statically 1, or missing, against a
// loop dim that is not statically 1.
bool broadcasts_into(const Shape& v, const Shape& loop) {
  const int64_t r = loop.rank(), off = r - v.rank();
  for (int64_t j = 0; j < r; ++j) {
    const int64_t d = j < off ? 1 : v[static_cast<size_t>(j - off)];
    if (d == 1 && loop[static_cast<size_t>(j)] != 1) return true;
  }
  return false;
}

}  // namespace

bool consumes_elementwise(const Node& n, uint32_t input) {
  if (is_elementwise_expr(n.op)) return n.op != OpKind::FillLike;  // FillLike reads only a shape
  const OpClass c = op_class(n.op);
  return (c == OpClass::Reduce || c == OpClass::ArgReduce) && input == 0;
}

bool is_cheap_to_recompute(OpKind op) { return is_elementwise_expr(op) && op_info(op).cost == OpCost::cheap; }

std::vector<std::vector<uint32_t>> fuse_elementwise(const Graph& g, std::vector<std::vector<ValuePlan>>& values) {
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
      // A register elementwise value is computed once, not in a loop; a reduction to a register
      // still walks its operand.
      const bool reg = !values[i].empty() && values[i][0].storage == ValueStorage::Reg;
      const bool loops = !(reg && is_elementwise_expr(c.op));
      if (!consumes_elementwise(c, k) || !loops) fusible_uses[v.node] = false;
    }
  }
  std::vector<bool> is_result(n, false);
  for (ValueId r : g.results) is_result[r.node] = true;
  // Prefix count of side-effecting nodes, to ask "is there one between i and j".
  std::vector<uint32_t> effects_before(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) effects_before[i + 1] = effects_before[i] + (has_side_effects(g.nodes[i]) ? 1 : 0);

  // Consumers come after their producers: deciding from the last node back, a value's consumer
  // already knows its group (root) and so the loop the value would be evaluated in.
  std::vector<uint32_t> root(n);
  std::vector<int> recomputed(n, 0);  // per root: broadcast ops recomputed in its loop
  auto loop_shape = [&](uint32_t r) -> const Shape& {
    const Node& rn = g.nodes[r];
    return is_elementwise_expr(rn.op) ? rn.outputs[0].shape : g.type(rn.inputs[0]).shape;  // a reduction walks its operand
  };
  for (uint32_t i = n; i-- > 0;) {
    root[i] = i;
    const Node& p = g.nodes[i];
    if (!(is_elementwise_expr(p.op) || is_inlined_draw(p)) || p.outputs.size() != 1 || is_result[i] || !fusible_uses[i])
      continue;
    ValuePlan& vp = values[i][0];
    if (vp.storage != ValueStorage::Arena && vp.storage != ValueStorage::Owned) continue;
    if (consumers[i].empty()) continue;
    if (consumers[i].size() > 1 && !is_fill(p.op)) continue;
    // An op that raises on bad data (integer division by zero): moving it past a side effect
    // would reorder the error and the side effect. (Dims are checked before the loop runs.)
    if (may_raise_on_values(p)) {
      const uint32_t last = *std::max_element(consumers[i].begin(), consumers[i].end());
      if (effects_before[last] != effects_before[i + 1]) continue;
    }
    if (!is_fill(p.op)) {  // a fill reads nothing: evaluating it anywhere is free
      const uint32_t r = root[consumers[i][0]];
      if (broadcasts_into(p.outputs[0].shape, loop_shape(r))) {
        if (!is_cheap_to_recompute(p.op) || recomputed[r] >= kMaxRecomputedPerGroup) continue;
        ++recomputed[r];
      }
      root[i] = r;
    }
    vp.storage = ValueStorage::Fused;
  }

  // The groups, for inspection: a fused value lists the roots it is evaluated in.
  std::vector<std::vector<uint32_t>> groups(n);
  for (uint32_t i = n; i-- > 0;) {
    if (values[i].empty() || values[i][0].storage != ValueStorage::Fused) continue;
    for (uint32_t c : consumers[i]) {
      const uint32_t r = groups[c].empty() ? c : groups[c][0];
      if (std::find(groups[i].begin(), groups[i].end(), r) == groups[i].end()) groups[i].push_back(r);
      if (groups[r].empty()) groups[r].push_back(r);
    }
  }
  return groups;
}

}  // namespace ag::jit
