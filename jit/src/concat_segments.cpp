// Elementwise ops over concatenations, segment by segment (concat_segments.h).
#include "concat_segments.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ag/graph/passes.h"
#include "plan_updates.h"

namespace ag::jit {
namespace {

bool static_tensor(const TensorType& t) { return t.dtype != DType::List && !t.rank_unknown && t.shape.is_fully_defined(); }

// The op a segment can compute alone: elementwise on its inputs' elements, unable to raise (the
// segments run in another order than the whole), one output of a static shape.
bool segmentable(const Graph& g, const Node& n) {
  if (!is_elementwise(n.op) || n.op == OpKind::Fill || n.op == OpKind::FillLike || !n.subgraphs.empty()) return false;
  if (n.outputs.size() != 1 || !static_tensor(n.outputs[0]) || n.outputs[0].shape.rank() == 0) return false;
  if (may_raise(g, n) || has_side_effects(n)) return false;
  for (ValueId v : n.inputs)
    if (!static_tensor(g.type(v))) return false;
  return true;
}

class Segmenter {
 public:
  Graph out;
  std::set<uint32_t> read_once_segments;  // concats of segments (in `out`) of an op read once or by chains that meet
  std::set<uint32_t> single_reader;       // nodes of `out` read by one node (a concat's: its pieces)

  // `c` (inputs in `out`) as the concatenation of its segments, or nothing when it reads no
  // concatenation along one of its axes or would take more than kMaxSegments segments (or
  // `budget`: each segment may be cut again along another axis, within budget / segments).
  std::optional<ValueId> by_segments(const Node& c, int64_t budget = kMaxTotalSegments) {
    if (!segmentable(out, c)) return std::nullopt;
    const Shape& shape = c.outputs[0].shape;
    const int64_t rank = shape.rank();
    // The axis of the first concatenation read (not broadcast along it), and the boundaries of
    // the pieces of every concatenation read along that axis.
    int64_t axis = -1;
    std::set<int64_t> cuts;
    for (ValueId v : c.inputs) {
      const int64_t a = concat_axis(v, rank);
      if (a < 0 || (axis >= 0 && a != axis) || out.type(v).shape[local_axis(v)] != shape[a]) continue;
      axis = a;
      int64_t at = 0;
      for (ValueId piece : out.nodes[v.node].inputs) {
        cuts.insert(at);
        at += out.type(piece).shape[local_axis(v)];
      }
    }
    if (axis < 0) return std::nullopt;
    cuts.insert(shape[axis]);
    const std::vector<int64_t> at(cuts.begin(), cuts.end());
    const int64_t segments = static_cast<int64_t>(at.size()) - 1;
    if (segments < 2 || segments > std::min(kMaxSegments, budget)) return std::nullopt;
    const int64_t inner_budget = budget / segments;
    Node whole;
    whole.op = OpKind::Concat;
    whole.attrs.axis = axis;
    whole.outputs = c.outputs;
    whole.loc = c.loc;
    for (int64_t k = 0; k < segments; ++k) {
      const int64_t begin = at[static_cast<size_t>(k)], end = at[static_cast<size_t>(k) + 1];
      Node seg = c;
      for (ValueId& v : seg.inputs) {
        const Shape& s = out.type(v).shape;
        const int64_t j = axis - (rank - s.rank());
        if (j >= 0 && s[j] != 1) v = segment_of(v, j, begin, end, c.loc, /*across=*/inner_budget >= 2);
      }
      seg.outputs[0].shape[axis] = end - begin;
      // A segment reading concatenations along another axis (a 2-D periodic stencil's rolls
      // along its rows): cut again along that axis.
      const std::optional<ValueId> cut = by_segments(seg, inner_budget);
      whole.inputs.push_back(cut ? *cut : out.add(std::move(seg)));
      pieces.push_back(whole.inputs.back().node);
    }
    const ValueId r = out.add(std::move(whole));
    created.push_back(r.node);
    return r;
  }

  std::vector<uint32_t> created;  // the concats by_segments made, in order
  std::vector<uint32_t> pieces;   // and their pieces

 private:
  // The axis of the output (of `rank` dims) along which `v` is a static concatenation to segment
  // over, or -1: one with a piece to copy (a slice, an argument, a constant: a roll, a pad), or
  // the segments of an op read once (an intermediate of a chain, whose segments then fuse with
  // their reader's). Another's pieces are computed into its buffer (plan_updates.h), which its
  // readers then read as it is: segmenting them over it would only multiply loops and code.
  int64_t concat_axis(ValueId v, int64_t rank) const {
    const Node& n = out.nodes[v.node];
    if (n.op != OpKind::Concat || !static_tensor(n.outputs[0])) return -1;
    bool copies = read_once_segments.count(v.node) > 0;
    for (ValueId piece : n.inputs) {
      if (!static_tensor(out.type(piece))) return -1;
      const OpKind op = out.nodes[piece.node].op;
      copies = copies || op == OpKind::Slice || op == OpKind::Placeholder || op == OpKind::Const;
    }
    if (!copies) return -1;
    const int64_t a = local_axis(v);
    return a + (rank - n.outputs[0].shape.rank());
  }
  int64_t local_axis(ValueId v) const { return jit::concat_axis(out.nodes[v.node]); }

  // Elements [begin, end) of `v` along its dim `j`: `v` itself, a piece of a concatenation along
  // j (or its slice), with `across` the concatenation along another axis of its pieces' elements
  // (which the segment then cuts along that axis), a slice of a slice's input, or a new slice.
  ValueId segment_of(ValueId v, int64_t j, int64_t begin, int64_t end, const SourceLoc& loc, bool across) {
    const TensorType& t = out.type(v);
    if (begin == 0 && end == t.shape[j]) return v;
    const Node& n = out.nodes[v.node];
    if (n.op == OpKind::Concat && static_tensor(n.outputs[0]) && local_axis(v) == j) {
      int64_t p0 = 0;
      for (ValueId piece : n.inputs) {
        const int64_t p1 = p0 + out.type(piece).shape[j];
        if (begin >= p0 && end <= p1) return segment_of(piece, j, begin - p0, end - p0, loc, across);
        p0 = p1;
      }
    }
    if (across && concat_axis(v, t.shape.rank()) >= 0 && local_axis(v) != j) {
      Node part = n;
      for (ValueId& piece : part.inputs) piece = segment_of(piece, j, begin, end, loc, across);
      part.outputs[0].shape[j] = end - begin;
      part.loc = loc;
      const ValueId r = out.add(std::move(part));
      // Rows of the segments of an op read once are segments of it too (a diagonal roll's
      // columns within a band of rows): the segment reading them cuts them along their axis.
      if (read_once_segments.count(v.node) > 0) read_once_segments.insert(r.node);
      return r;
    }
    // A cheap elementwise value read once: the same op over its operands' elements [begin, end)
    // (a slice pulled through it), fused into the segment's loop instead of computed whole and
    // sliced. Its one reader's segments are disjoint, so no element is computed twice (a value
    // read by several rolls is computed once and read in place).
    if (single_reader.count(v.node) > 0 && segmentable(out, n) && op_info(n.op).cost == OpCost::cheap) {
      const std::string key = fmt::format("op {}:{} {} {} {}", v.node, v.index, j, begin, end);
      if (auto it = slices_.find(key); it != slices_.end()) return it->second;
      Node part = n;
      for (ValueId& in : part.inputs) {
        const Shape& s = out.type(in).shape;
        const int64_t k = j - (t.shape.rank() - s.rank());
        if (k >= 0 && s[k] != 1) in = segment_of(in, k, begin, end, loc, across);
      }
      part.outputs[0].shape[j] = end - begin;
      const ValueId r = out.add(std::move(part));
      single_reader.insert(r.node);  // a part of a value read once: its readers' slices are disjoint too
      return slices_[key] = r;
    }
    std::vector<int64_t> from(static_cast<size_t>(t.shape.rank()), 0), size(t.shape.begin(), t.shape.end());
    from[static_cast<size_t>(j)] = begin;
    size[static_cast<size_t>(j)] = end - begin;
    return box_of(v, from, size, loc);
  }

  // The box [from, from + size) of `v`: `v` itself, the box of a slice's input, the box of the
  // one piece of a concatenation that holds it (a diagonal roll: a roll of a roll), or a new slice.
  ValueId box_of(ValueId v, std::vector<int64_t> from, const std::vector<int64_t>& size, const SourceLoc& loc) {
    const TensorType& t = out.type(v);
    if (std::all_of(from.begin(), from.end(), [](int64_t f) { return f == 0; }) &&
        std::equal(size.begin(), size.end(), t.shape.begin(), t.shape.end()))
      return v;
    const Node& n = out.nodes[v.node];
    if (n.op == OpKind::Slice && static_tensor(out.type(n.inputs[0]))) {
      for (size_t k = 0; k < from.size(); ++k) from[k] += n.attrs.slice_begin()[static_cast<int64_t>(k)];
      return box_of(n.inputs[0], from, size, loc);
    }
    if (n.op == OpKind::Concat && static_tensor(n.outputs[0])) {
      const auto a = static_cast<size_t>(local_axis(v));
      int64_t p0 = 0;
      for (ValueId piece : n.inputs) {
        const int64_t p1 = p0 + out.type(piece).shape[static_cast<int64_t>(a)];
        if (from[a] >= p0 && from[a] + size[a] <= p1) {
          from[a] -= p0;
          return box_of(piece, from, size, loc);
        }
        p0 = p1;
      }
    }
    const std::string key = fmt::format("{}:{} {} {}", v.node, v.index, fmt::join(from, ","), fmt::join(size, ","));
    if (auto it = slices_.find(key); it != slices_.end()) return it->second;
    Node s;
    s.op = OpKind::Slice;
    s.inputs = {v};
    TensorType st = t;
    st.shape = Shape(size);
    s.outputs = {st};
    s.attrs.slice_begin() = Shape(from);
    s.attrs.slice_size() = Shape(size);
    s.loc = loc;
    return slices_[key] = out.add(std::move(s));
  }

  std::map<std::string, ValueId> slices_;
};

// For each node of `g`: whether its readers are elementwise chains that meet (a stencil's count
// compared with 3 and with 2, the two compares or-ed): each reader is then cut at the same
// boundaries and the chains fuse per segment, the node computed in their loops, never whole.
// Readers in separate loops (a Runge-Kutta stage read by later stages) would only multiply
// loops and code, each reading its segment of the node's buffer.
std::vector<bool> read_by_one_chain(const Graph& g, const std::vector<int>& reads) {
  std::vector<std::vector<uint32_t>> readers(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs)
      if (readers[v.node].empty() || readers[v.node].back() != i) readers[v.node].push_back(i);
  // The nodes an elementwise chain from `i` runs through, each the one reader of the last (the
  // first 64: chains that meet do so within a statement or two).
  auto chain = [&](uint32_t i) {
    std::set<uint32_t> nodes;
    while (nodes.size() < 64 && segmentable(g, g.nodes[i]) && nodes.insert(i).second && reads[i] == 1) i = readers[i][0];
    return nodes;
  };
  auto elementwise = [&](uint32_t r) { return segmentable(g, g.nodes[r]); };
  std::vector<bool> one_chain(g.nodes.size(), false);
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (readers[i].size() < 2) continue;
    std::set<uint32_t> common = chain(readers[i][0]);
    for (size_t k = 1; k < readers[i].size() && !common.empty(); ++k) {
      const std::set<uint32_t> next = chain(readers[i][k]);
      std::erase_if(common, [&](uint32_t n) { return next.count(n) == 0; });
    }
    one_chain[i] = !common.empty() && std::all_of(readers[i].begin(), readers[i].end(), elementwise);
  }
  return one_chain;
}

std::optional<Graph> transform(const Graph& g) {
  Segmenter seg;
  seg.out.name = g.name;
  std::vector<std::vector<ValueId>> map(g.nodes.size());
  std::vector<int> reads(g.nodes.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs) ++reads[v.node];
  for (ValueId r : g.results) reads[r.node] += 2;
  const std::vector<bool> fused_readers = read_by_one_chain(g, reads);
  bool changed = false;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op == OpKind::Placeholder) {
      map[i] = {seg.out.add_param(n.outputs[0], n.loc)};
      continue;
    }
    Node c = n;
    for (ValueId& v : c.inputs) v = map[v.node][v.index];
    for (auto& sub : c.subgraphs)
      if (std::optional<Graph> t = transform(*sub)) sub = std::make_shared<const Graph>(std::move(*t)), changed = true;
    const size_t made = seg.created.size(), made_pieces = seg.pieces.size();
    if (std::optional<ValueId> r = seg.by_segments(c)) {
      // Read once or by chains that meet: its segments' concats (along each axis) are
      // intermediates of a chain; read once, each piece is read by its concat alone.
      if (reads[i] == 1 || fused_readers[i])
        seg.read_once_segments.insert(seg.created.begin() + static_cast<std::ptrdiff_t>(made), seg.created.end());
      if (reads[i] == 1) seg.single_reader.insert(seg.pieces.begin() + static_cast<std::ptrdiff_t>(made_pieces), seg.pieces.end());
      map[i] = {*r};
      changed = true;
      continue;
    }
    const ValueId v = seg.out.add(std::move(c));
    if (reads[i] == 1) seg.single_reader.insert(v.node);
    for (uint32_t k = 0; k < n.outputs.size(); ++k) map[i].push_back({v.node, k});
  }
  if (!changed) return std::nullopt;
  for (ValueId r : g.results) seg.out.results.push_back(map[r.node][r.index]);
  return prune(seg.out);
}

}  // namespace

std::shared_ptr<const Graph> compute_concats_by_segments(std::shared_ptr<const Graph> g) {
  if (!contains_op(*g, OpKind::Concat)) return g;  // most graphs: no copy of the graph to find nothing
  if (std::optional<Graph> t = transform(*g)) return std::make_shared<const Graph>(std::move(*t));
  return g;
}

}  // namespace ag::jit
