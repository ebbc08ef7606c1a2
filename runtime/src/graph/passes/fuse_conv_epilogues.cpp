// fuse_conv_epilogues: grappler's remapper for convolutions. A CNN layer is written
// relu(bias_add(conv2d(x, w), b)); traced, that is Conv2D -> Add -> Relu, and the convolution's
// output is a value of its own: a buffer as large as the layer's output (6.4 MB for a ResNet
// 3x3 stage of batch 8) written by oneDNN, then read once by the bias and relu loop. Here the
// three become one FusedConv2D(x, w, b) {relu}: oneDNN adds the bias to each finished sum and
// the relu runs in place on the result, so that buffer, its first-call page faults and a pass
// over it are gone. Only where the convolution's value (and the sum's, before a relu) has no
// other reader, and the bias is one value per output channel; the same bits as unfused (the
// window kernel's epilogue, window_kernel.cpp).
#include <optional>
#include <vector>

#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

// What a fused node replaces, found at its last node (the root): the Conv2D, the bias (or
// none), whether a Relu ends it.
struct Fusion {
  uint32_t conv = 0;
  std::optional<ValueId> bias;
  bool relu = false;
};

// Readers of each node's first output, results included (a result is a reader nothing can fuse).
std::vector<int> count_readers(const Graph& g) {
  std::vector<int> readers(g.nodes.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v.index == 0) ++readers[v.node];
  for (ValueId r : g.results)
    if (r.index == 0) readers[r.node] += 2;
  return readers;
}

// The bias operand of Add node `add` over Conv2D node `conv`: the other operand, a vector of one
// value per output channel of the conv's dtype, the sum keeping the conv's type.
std::optional<ValueId> bias_of(const Graph& g, const Node& add, uint32_t conv) {
  const TensorType& y = g.nodes[conv].outputs[0];
  if (add.op != OpKind::Add || add.inputs.size() != 2 || add.outputs[0] != y) return std::nullopt;
  const int which = add.inputs[0] == ValueId{conv, 0} ? 1 : add.inputs[1] == ValueId{conv, 0} ? 0 : -1;
  if (which < 0) return std::nullopt;
  const ValueId b = add.inputs[static_cast<size_t>(which)];
  const TensorType& bt = g.type(b);
  if (bt.dtype != y.dtype || bt.rank_unknown || bt.shape.rank() != 1 || y.rank_unknown || y.shape.rank() != 4) return std::nullopt;
  if (bt.shape[0] < 0 || bt.shape[0] != y.shape[3]) return std::nullopt;
  return b;
}

// The fusions of g, by root node; `absorbed` marks the nodes a root replaces.
std::vector<std::optional<Fusion>> find_fusions(const Graph& g, std::vector<bool>& absorbed) {
  const std::vector<int> readers = count_readers(g);
  // The one node reading node i's value, when it has exactly one reader (and is no result).
  std::vector<int64_t> reader(g.nodes.size(), -1);
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs)
      if (v.index == 0 && readers[v.node] == 1) reader[v.node] = i;
  std::vector<std::optional<Fusion>> roots(g.nodes.size());
  absorbed.assign(g.nodes.size(), false);
  for (uint32_t c = 0; c < g.nodes.size(); ++c) {
    const Node& conv = g.nodes[c];
    if (conv.op != OpKind::Conv2D || reader[c] < 0) continue;
    Fusion f{c, std::nullopt, false};
    uint32_t root = static_cast<uint32_t>(reader[c]);
    if (auto b = bias_of(g, g.nodes[root], c)) {
      f.bias = b;
      if (reader[root] >= 0 && g.nodes[static_cast<size_t>(reader[root])].op == OpKind::Relu) {
        absorbed[root] = true;
        root = static_cast<uint32_t>(reader[root]);
        f.relu = true;
      }
    } else if (g.nodes[root].op == OpKind::Relu) {
      f.relu = true;
    } else {
      continue;
    }
    absorbed[c] = true;
    roots[root] = f;
  }
  return roots;
}

}  // namespace

Graph fuse_conv_epilogues(const Graph& g) {
  std::vector<bool> absorbed;
  const std::vector<std::optional<Fusion>> roots = find_fusions(g, absorbed);
  return detail::rebuild(g, [&](detail::GraphRebuilder& rb, uint32_t id) {
    if (absorbed[id]) return;  // read only by its fusion's root
    const Node& src = g.nodes[id];
    if (!roots[id]) {
      if (src.subgraphs.empty()) rb.emit(id, rb.remapped(id));
      else rb.emit(id, detail::with_transformed_subgraphs(rb.remapped(id), &fuse_conv_epilogues));
      return;
    }
    const Fusion& f = *roots[id];
    const Node& conv = g.nodes[f.conv];
    std::vector<ValueId> inputs{rb.map(conv.inputs[0]), rb.map(conv.inputs[1])};
    if (f.bias) inputs.push_back(rb.map(*f.bias));
    Attrs attrs = conv.attrs;
    attrs.fused_relu() = f.relu;
    rb.emit(id, detail::make_node(OpKind::FusedConv2D, std::move(inputs), src.outputs[0], attrs, conv.loc));
  });
}

}  // namespace ag
