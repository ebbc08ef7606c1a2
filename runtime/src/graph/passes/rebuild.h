// GraphRebuilder: the common skeleton of passes. Copies a graph node by node into a new one,
// remapping values, and lets a pass replace a node by existing values or inline a sub-graph.
#pragma once

#include <functional>
#include <memory>

#include "ag/graph/graph.h"

namespace ag::detail {

// Copies `sub` into `dst` with its params bound to `args`; returns its results.
std::vector<ValueId> inline_graph_into(Graph& dst, const Graph& sub, const std::vector<ValueId>& args);

class GraphRebuilder {
 public:
  explicit GraphRebuilder(const Graph& src);

  const Graph& src() const { return src_; }
  Graph& out() { return out_; }
  ValueId map(ValueId v) const { return remap_[v.node][v.index]; }
  // The source node with inputs remapped into the new graph.
  Node remapped(uint32_t id) const;
  // Adds `n` to the new graph as the image of source node `id`.
  void emit(uint32_t id, Node n);
  // Source node `id` is replaced by existing values of the new graph.
  void alias(uint32_t id, std::vector<ValueId> values);
  // Copies `sub` into the new graph with its params bound to `args`; returns its results.
  std::vector<ValueId> inline_graph(const Graph& sub, const std::vector<ValueId>& args);
  Graph finish();

 private:
  const Graph& src_;
  Graph out_;
  std::vector<std::vector<ValueId>> remap_;
};

// Rebuilds g, calling visit(rebuilder, node id) for every non-Placeholder node; a visitor that
// does nothing special calls rb.emit(id, rb.remapped(id)).
Graph rebuild(const Graph& g, const std::function<void(GraphRebuilder&, uint32_t)>& visit);

// A node of one output, for a pass that adds nodes of its own.
Node make_node(OpKind op, std::vector<ValueId> inputs, TensorType type, Attrs attrs, SourceLoc loc);

// A Fill of type `type` whose one value is the scalar constant `scalar` (added to `out`): the
// node that reads no memory where a dense constant would be a buffer.
Node fill_of_constant(Graph& out, Tensor scalar, const TensorType& type, SourceLoc loc);

// Applies `pass` to the sub-graphs of node n (returns a copy of n with new sub-graphs).
Node with_transformed_subgraphs(Node n, Graph (*pass)(const Graph&));

bool is_const(const Graph& g, ValueId v);
const Tensor& const_value(const Graph& g, ValueId v);
// True when every element of the constant v equals `x`.
bool const_all_equal(const Graph& g, ValueId v, double x);

}  // namespace ag::detail
