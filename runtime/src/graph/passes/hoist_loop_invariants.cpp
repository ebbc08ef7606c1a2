// Loop-invariant code motion: what a While's cond or body computes from values that do not
// change between iterations runs once, before the loop, and enters it as a new invariant input.
// The gradient of a matmul in a staged loop is the case that asked for it: Transpose(x) of a
// loop-invariant x ran on every iteration.
//
// A node is invariant when it is not stateful, has no sub-graphs, and reads only invariant
// params (the inputs after the loop vars, and loop vars the body returns unchanged), constants
// and other invariant nodes. Hoisted out of the body, a node runs even when the loop runs no
// iteration, so it must not be able to raise (may_raise: an out-of-range gather, an integer
// division, a dim known only at run time). The cond runs at least once, so everything invariant
// in it may move. Views and fills are not worth moving on their own (they cost nothing where
// they are, and fused they are free); they move when a hoisted node reads them, and a fill
// moves when a node that reads whole buffers (an index op, a product) reads it.
#include <algorithm>

#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

// Views cost nothing where they are; sources (constants, fills) are free where fusion puts them.
bool worth_hoisting(OpKind op) { return op_info(op).cost != OpCost::view && op_class(op) != OpClass::Source; }

// Ops that read their inputs as whole buffers, never fused into their loops (a segment sum, a
// convolution, a product): a fill they read is materialized where it is, on every iteration
// (k-means' `unsorted_segment_sum(ones_like(ids), ids, k)` filled 100,000 ones per iteration).
bool reads_whole_buffers(OpKind op) {
  switch (op_class(op)) {
    case OpClass::Index:
    case OpClass::Window:
    case OpClass::MatMul:
    case OpClass::Scan:
    case OpClass::List:
      return true;
    default: return false;
  }
}

// Which nodes of `sub` a whole-buffer reader reads.
std::vector<bool> read_as_buffers(const Graph& sub) {
  std::vector<bool> read(sub.nodes.size(), false);
  for (const Node& n : sub.nodes)
    if (reads_whole_buffers(n.op))
      for (ValueId v : n.inputs) read[v.node] = true;
  return read;
}

// Which params of a While's sub-graphs hold the same value on every iteration: the inputs after
// the loop vars, and loop vars that the body returns as they came in.
std::vector<bool> invariant_params(const Node& loop) {
  const Graph& body = *loop.subgraphs[1];
  const size_t loop_vars = static_cast<size_t>(loop.attrs.loop_vars());
  std::vector<bool> invariant(loop.inputs.size(), true);
  for (size_t i = 0; i < loop_vars; ++i) invariant[i] = body.results[i] == body.param(i);
  return invariant;
}

// The nodes of `sub` (a While's cond or body) to run before the loop: invariant ones worth
// hoisting, and the invariant nodes they read.
std::vector<bool> nodes_to_hoist(const Graph& sub, const std::vector<bool>& invariant_param, bool runs_every_time) {
  std::vector<bool> invariant(sub.nodes.size(), false), hoist(sub.nodes.size(), false);
  const std::vector<bool> buffer_read = read_as_buffers(sub);
  bool any = false;
  for (uint32_t id = 0; id < sub.nodes.size(); ++id) {
    const Node& n = sub.nodes[id];
    if (n.op == OpKind::Placeholder) {
      invariant[id] = invariant_param[static_cast<size_t>(n.attrs.param_index())];
      continue;
    }
    if (op_info(n.op).stateful || !n.subgraphs.empty() || (!runs_every_time && may_raise(sub, n))) continue;
    bool reads_invariants = true;
    for (ValueId v : n.inputs) reads_invariants = reads_invariants && invariant[v.node];
    invariant[id] = reads_invariants;
    // A fill (not a constant: that is no work) that a whole-buffer reader reads is worth it too.
    hoist[id] = reads_invariants &&
                (worth_hoisting(n.op) || (op_class(n.op) == OpClass::Source && n.op != OpKind::Const && buffer_read[id]));
    any = any || hoist[id];
  }
  if (!any) return {};
  // What hoisted nodes read moves with them (params excepted: they are the loop's inputs).
  for (uint32_t id = static_cast<uint32_t>(sub.nodes.size()); id-- > 0;)
    if (hoist[id])
      for (ValueId v : sub.nodes[id].inputs)
        if (sub.nodes[v.node].op != OpKind::Placeholder) hoist[v.node] = true;
  return hoist;
}

// `sub` with one more param per value in `added`, appended as its last nodes (node ids stay).
Graph appended_params(const Graph& sub, const std::vector<TensorType>& added) {
  Graph g = sub;
  for (const TensorType& t : added) g.add_param(t);
  return g;
}

// The same, rebuilt so that the params are the first nodes again, as tracing makes them.
Graph with_params(const Graph& sub, const std::vector<TensorType>& added) {
  return detail::rebuild(appended_params(sub, added),
                         [](detail::GraphRebuilder& rb, uint32_t id) { rb.emit(id, rb.remapped(id)); });
}

// Moves the hoistable nodes of the loop's sub-graph `which` into `outer` (before the loop) and
// returns the loop with one new invariant input per hoisted value that the sub-graph still reads.
Node hoist_from(Graph& outer, Node loop, size_t which) {
  const Graph& sub = *loop.subgraphs[which];
  const std::vector<bool> hoist = nodes_to_hoist(sub, invariant_params(loop), /*runs_every_time=*/which == 0);
  if (hoist.empty()) return loop;

  // The hoisted nodes, copied into the outer graph in order.
  std::vector<std::vector<ValueId>> outside(sub.nodes.size());
  for (uint32_t id = 0; id < sub.nodes.size(); ++id) {
    const Node& n = sub.nodes[id];
    if (n.op == OpKind::Placeholder) outside[id] = {loop.inputs[static_cast<size_t>(n.attrs.param_index())]};
    if (!hoist[id]) continue;
    Node copy = n;
    for (ValueId& v : copy.inputs) v = outside[v.node][v.index];
    const ValueId first = outer.add(std::move(copy));
    for (uint32_t k = 0; k < n.outputs.size(); ++k) outside[id].push_back({first.node, k});
  }

  // Hoisted values the rest of the sub-graph reads become inputs of the loop; a constant is
  // copied instead (it stays an immediate where the body reads it, as a loop counter's 1).
  std::vector<ValueId> crossing;
  std::vector<bool> const_kept(sub.nodes.size(), false);
  auto note_use = [&](ValueId v) {
    if (!hoist[v.node]) return;
    if (sub.nodes[v.node].op == OpKind::Const) {
      const_kept[v.node] = true;
    } else if (std::find(crossing.begin(), crossing.end(), v) == crossing.end()) {
      crossing.push_back(v);
    }
  };
  for (uint32_t id = 0; id < sub.nodes.size(); ++id)
    if (!hoist[id])
      for (ValueId v : sub.nodes[id].inputs) note_use(v);
  for (ValueId r : sub.results) note_use(r);
  std::vector<TensorType> added;
  for (ValueId v : crossing) {
    added.push_back(sub.type(v));
    loop.inputs.push_back(outside[v.node][v.index]);
  }

  // The sub-graph without the hoisted nodes, reading the new params instead.
  Graph shrunk = detail::rebuild(appended_params(sub, added), [&](detail::GraphRebuilder& rb, uint32_t id) {
    if (id < sub.nodes.size() && const_kept[id]) {
      rb.emit(id, rb.remapped(id));
      return;
    }
    if (id < sub.nodes.size() && hoist[id]) {
      std::vector<ValueId> values;
      for (uint32_t k = 0; k < sub.nodes[id].outputs.size(); ++k) {
        const auto at = std::find(crossing.begin(), crossing.end(), ValueId{id, k});
        // (A value only hoisted nodes read has no image here: nothing left maps through it.)
        values.push_back(at == crossing.end() ? ValueId{}
                                              : rb.out().param(sub.params.size() + static_cast<size_t>(at - crossing.begin())));
      }
      rb.alias(id, std::move(values));
      return;
    }
    rb.emit(id, rb.remapped(id));
  });
  loop.subgraphs[which] = std::make_shared<const Graph>(std::move(shrunk));
  // The other sub-graph takes the same inputs.
  const size_t other = 1 - which;
  loop.subgraphs[other] = std::make_shared<const Graph>(with_params(*loop.subgraphs[other], added));
  return loop;
}

// Whether value `v` of `g` is read: by a node, or as a result.
bool is_read(const Graph& g, ValueId v) {
  for (const Node& n : g.nodes)
    if (std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end()) return true;
  return std::find(g.results.begin(), g.results.end(), v) != g.results.end();
}

// `sub` without the params `drop` marks (nothing reads them).
Graph without_params(const Graph& sub, const std::vector<bool>& drop) {
  Graph g;
  g.name = sub.name;
  std::vector<ValueId> args;
  for (size_t p = 0; p < sub.params.size(); ++p) {
    if (drop[p]) {
      args.push_back(ValueId{});  // never read
      continue;
    }
    args.push_back(g.add_param(sub.nodes[sub.params[p]].outputs[0], sub.nodes[sub.params[p]].loc));
  }
  g.results = detail::inline_graph_into(g, sub, args);
  return g;
}

// A loop without the invariant inputs neither its cond nor its body reads any more (what they
// read has moved out of the loop, with this pass or before it).
Node drop_unread_invariants(Node loop) {
  const size_t loop_vars = static_cast<size_t>(loop.attrs.loop_vars());
  const Graph& cond = *loop.subgraphs[0];
  const Graph& body = *loop.subgraphs[1];
  std::vector<bool> drop(loop.inputs.size(), false);
  bool any = false;
  for (size_t k = loop_vars; k < loop.inputs.size(); ++k) {
    drop[k] = !is_read(cond, cond.param(k)) && !is_read(body, body.param(k));
    any = any || drop[k];
  }
  if (!any) return loop;
  std::vector<ValueId> inputs;
  for (size_t k = 0; k < loop.inputs.size(); ++k)
    if (!drop[k]) inputs.push_back(loop.inputs[k]);
  loop.inputs = std::move(inputs);
  for (auto& sub : loop.subgraphs) sub = std::make_shared<const Graph>(without_params(*sub, drop));
  return loop;
}

}  // namespace

Graph hoist_loop_invariants(const Graph& g) {
  return detail::rebuild(g, [&](detail::GraphRebuilder& rb, uint32_t id) {
    // Inner loops first: what they hoist into this loop's body may move further out.
    Node n = detail::with_transformed_subgraphs(rb.remapped(id), &hoist_loop_invariants);
    if (n.op == OpKind::While) {
      n = hoist_from(rb.out(), std::move(n), 1);
      n = hoist_from(rb.out(), std::move(n), 0);
      n = drop_unread_invariants(std::move(n));
    }
    rb.emit(id, std::move(n));
  });
}

}  // namespace ag
