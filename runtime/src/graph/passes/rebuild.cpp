// GraphRebuilder.
#include "rebuild.h"

#include "ag/detail/ops_internal.h"

namespace ag::detail {

GraphRebuilder::GraphRebuilder(const Graph& src) : src_(src) {
  out_.name = src.name;
  remap_.resize(src.nodes.size());
  for (uint32_t p : src.params) {
    Node n = src.nodes[p];
    n.attrs.param_index() = static_cast<int64_t>(out_.params.size());
    ValueId v = out_.add(std::move(n));
    out_.params.push_back(v.node);
    remap_[p] = {v};
  }
}

Node GraphRebuilder::remapped(uint32_t id) const {
  Node n = src_.nodes[id];
  for (ValueId& v : n.inputs) v = map(v);
  return n;
}

void GraphRebuilder::emit(uint32_t id, Node n) {
  const uint32_t outputs = static_cast<uint32_t>(n.outputs.size());
  ValueId v = out_.add(std::move(n));
  remap_[id].clear();
  for (uint32_t i = 0; i < outputs; ++i) remap_[id].push_back({v.node, i});
}

void GraphRebuilder::alias(uint32_t id, std::vector<ValueId> values) { remap_[id] = std::move(values); }

std::vector<ValueId> inline_graph_into(Graph& dst, const Graph& sub, const std::vector<ValueId>& args) {
  std::vector<std::vector<ValueId>> local(sub.nodes.size());
  for (size_t i = 0; i < sub.params.size(); ++i) local[sub.params[i]] = {args[i]};
  for (uint32_t id = 0; id < sub.nodes.size(); ++id) {
    const Node& s = sub.nodes[id];
    if (s.op == OpKind::Placeholder) continue;
    Node n = s;
    for (ValueId& v : n.inputs) v = local[v.node][v.index];
    const uint32_t outputs = static_cast<uint32_t>(n.outputs.size());
    const ValueId v = dst.add(std::move(n));
    for (uint32_t i = 0; i < outputs; ++i) local[id].push_back({v.node, i});
  }
  std::vector<ValueId> results;
  for (ValueId r : sub.results) results.push_back(local[r.node][r.index]);
  return results;
}

std::vector<ValueId> GraphRebuilder::inline_graph(const Graph& sub, const std::vector<ValueId>& args) {
  return inline_graph_into(out_, sub, args);
}

Graph GraphRebuilder::finish() {
  for (ValueId r : src_.results) out_.results.push_back(map(r));
  return std::move(out_);
}

Graph rebuild(const Graph& g, const std::function<void(GraphRebuilder&, uint32_t)>& visit) {
  GraphRebuilder rb(g);
  for (uint32_t id = 0; id < g.nodes.size(); ++id)
    if (g.nodes[id].op != OpKind::Placeholder) visit(rb, id);
  return rb.finish();
}

Node with_transformed_subgraphs(Node n, Graph (*pass)(const Graph&)) {
  for (auto& sub : n.subgraphs) sub = std::make_shared<const Graph>(pass(*sub));
  return n;
}

bool is_const(const Graph& g, ValueId v) { return g.nodes[v.node].op == OpKind::Const; }
const Tensor& const_value(const Graph& g, ValueId v) { return g.nodes[v.node].attrs.value; }

bool const_all_equal(const Graph& g, ValueId v, double x) {
  // A Fill of a constant (a folded uniform value, fold.cpp): its one value.
  if (g.nodes[v.node].op == OpKind::Fill && is_const(g, g.nodes[v.node].inputs[0]))
    return g.nodes[v.node].outputs[0].shape.num_elements() > 0 && const_all_equal(g, g.nodes[v.node].inputs[0], x);
  if (!is_const(g, v)) return false;
  const Tensor& t = const_value(g, v);
  if (t.dtype() == DType::List) return false;
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i)
    if (element_as_double(t, i) != x) return false;
  return n > 0;
}

Node fill_of_constant(Graph& out, Tensor scalar, const TensorType& type, SourceLoc loc) {
  const TensorType scalar_type = type_of(scalar);
  Attrs value;
  value.value = std::move(scalar);
  const ValueId c = out.add(make_node(OpKind::Const, {}, scalar_type, std::move(value), loc));
  Attrs fill;
  fill.shape = type.shape;
  fill.dtype = type.dtype;
  return make_node(OpKind::Fill, {c}, type, std::move(fill), loc);
}

Node make_node(OpKind op, std::vector<ValueId> inputs, TensorType type, Attrs attrs, SourceLoc loc) {
  Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = {std::move(type)};
  n.attrs = std::move(attrs);
  n.loc = loc;
  return n;
}

}  // namespace ag::detail
