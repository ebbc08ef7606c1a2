// fuse_all_reduces: Horovod's tensor fusion. A train step all-reduces one gradient per Variable,
// most of them small, and each collective costs a round of messages whatever its size; here
// the small all-reduces of one reduction and dtype that nothing reads in between become one:
// the operands flattened into one buffer (Concat), one AllReduce, and each result sliced back.
#include <map>

#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

// Each operand at most this big is fused (larger ones are reduced on their own, in place), and
// a fused buffer holds at most kBufferBytes (Horovod's default fusion threshold).
constexpr int64_t kOperandBytes = int64_t{4} << 20;
constexpr int64_t kBufferBytes = int64_t{64} << 20;


int64_t fusable_bytes(const Graph& g, const Node& n) {
  if (n.op != OpKind::AllReduce) return -1;
  const TensorType& t = g.type(n.inputs[0]);
  if (t.has_unknown_rank() || !t.shape.is_fully_defined() || t.shape.num_elements() == 0) return -1;
  const int64_t bytes = t.shape.num_elements() * static_cast<int64_t>(dtype_size(t.dtype));
  return bytes <= kOperandBytes ? bytes : -1;
}

// The groups of node ids to fuse, each in graph order, two or more members.
std::vector<std::vector<uint32_t>> fusion_groups(const Graph& g) {
  struct Open {
    std::vector<uint32_t> members;
    int64_t bytes = 0;
  };
  std::map<std::pair<int64_t, DType>, Open> open;  // by (ReduceOp, dtype)
  std::vector<std::vector<uint32_t>> done;
  auto close = [&](std::map<std::pair<int64_t, DType>, Open>::iterator it) {
    if (it->second.members.size() > 1) done.push_back(std::move(it->second.members));
    open.erase(it);
  };
  auto member_of_open = [&](ValueId v) {
    for (auto it = open.begin(); it != open.end(); ++it)
      for (uint32_t m : it->second.members)
        if (m == v.node) return it;
    return open.end();
  };
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    // A reader of a member: the group's fused node must come before it, so the group ends.
    for (ValueId v : n.inputs)
      if (auto it = member_of_open(v); it != open.end()) close(it);
    const int64_t bytes = fusable_bytes(g, n);
    if (bytes < 0) continue;
    const auto key = std::make_pair(n.attrs.axis, g.type(n.inputs[0]).dtype);
    auto it = open.find(key);
    if (it != open.end() && it->second.bytes + bytes > kBufferBytes) close(it);
    Open& grp = open[key];
    grp.members.push_back(i);
    grp.bytes += bytes;
  }
  while (!open.empty()) close(open.begin());
  return done;
}

// Emits the fused form of `members` (their operands are all in the new graph by now) and maps
// each member to its slice of the fused result.
void emit_fused(detail::GraphRebuilder& rb, const std::vector<uint32_t>& members) {
  const Graph& src = rb.src();
  const Node& first = src.nodes[members.front()];
  const DType dtype = src.type(first.inputs[0]).dtype;
  std::vector<ValueId> flat;
  int64_t total = 0;
  for (uint32_t m : members) {
    const Node& n = src.nodes[m];
    const int64_t numel = src.type(n.inputs[0]).shape.num_elements();
    Attrs a;
    a.shape = Shape{numel};
    flat.push_back(rb.out().add(detail::make_node(OpKind::Reshape, {rb.map(n.inputs[0])}, {dtype, Shape{numel}}, a, n.loc)));
    total += numel;
  }
  Attrs concat;
  concat.axis = 0;
  const ValueId buffer = rb.out().add(detail::make_node(OpKind::Concat, flat, {dtype, Shape{total}}, concat, first.loc));
  Attrs reduce;
  reduce.axis = first.attrs.axis;
  const ValueId reduced = rb.out().add(detail::make_node(OpKind::AllReduce, {buffer}, {dtype, Shape{total}}, reduce, first.loc));
  int64_t offset = 0;
  for (uint32_t m : members) {
    const Node& n = src.nodes[m];
    const TensorType& t = src.type(n.inputs[0]);
    const int64_t numel = t.shape.num_elements();
    Attrs slice;
    slice.slice_begin() = Shape{offset};
    slice.slice_size() = Shape{numel};
    const ValueId part = rb.out().add(detail::make_node(OpKind::Slice, {reduced}, {dtype, Shape{numel}}, slice, n.loc));
    Attrs back;
    back.shape = t.shape;
    rb.alias(m, {rb.out().add(detail::make_node(OpKind::Reshape, {part}, t, back, n.loc))});
    offset += numel;
  }
}

}  // namespace

Graph fuse_all_reduces(const Graph& g) {
  if (!contains_op(g, OpKind::AllReduce)) return g;
  const std::vector<std::vector<uint32_t>> groups = fusion_groups(g);
  std::vector<int> group_of(g.nodes.size(), -1);
  for (size_t k = 0; k < groups.size(); ++k)
    for (uint32_t m : groups[k]) group_of[m] = static_cast<int>(k);
  return detail::rebuild(g, [&](detail::GraphRebuilder& rb, uint32_t id) {
    if (group_of[id] >= 0) {
      // Members wait for the last one, where every operand exists and no reader has come yet.
      const auto& members = groups[static_cast<size_t>(group_of[id])];
      if (id == members.back()) emit_fused(rb, members);
      return;
    }
    Node n = rb.remapped(id);
    if (!n.subgraphs.empty()) n = detail::with_transformed_subgraphs(std::move(n), &fuse_all_reduces);
    rb.emit(id, std::move(n));
  });
}

}  // namespace ag
