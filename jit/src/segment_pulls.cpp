#include "segment_pulls.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ag/detail/tensor_impl.h"
#include "fusion.h"

namespace ag::jit {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();  // the order holds int32 edges and rows

bool is_index_dtype(DType d) { return d == DType::Int32 || d == DType::Int64; }

// The updates of segment sum `pull`.
ValueId out_updates(const ScopePlan& body, const SegmentPull& pull) { return body.graph->nodes[pull.node].inputs[2]; }

// The gathers fused into value `v`'s expression, outermost first (as lower_scatter.cpp finds
// them), and whether another leaf reads at the edge's row; false when a gather cannot be pulled
// (its indices change in the loop, or its params' rows are not static).
bool pulled_gathers(const ScopePlan& body, ValueId v, int64_t loop_vars, int64_t edges, SegmentPull& out) {
  const Graph& g = *body.graph;
  if (body.at(v).storage != ValueStorage::Fused) {  // read from its buffer, at the edge's row unless it broadcasts
    const TensorType& t = g.type(v);
    if (t.rank_unknown || (t.shape.rank() == g.type(out_updates(body, out)).shape.rank() && t.shape[0] != 1)) out.reads_edges = true;
    return true;
  }
  const Node& n = g.nodes[v.node];
  if (n.op == OpKind::Gather) {
    const TensorType& params = g.type(n.inputs[0]);
    const TensorType& indices = g.type(n.inputs[1]);
    const int64_t param = loop_capture(g, n.inputs[1], loop_vars);
    if (param < 0 || params.rank_unknown || params.shape.rank() < 1 || params.shape[0] < 0 || params.shape[0] > kInt32Max || !is_index_dtype(indices.dtype) ||
        indices.shape.rank() != 1 || indices.shape[0] != edges)
      return false;
    out.gathers.push_back({v.node, static_cast<size_t>(param)});
    return true;
  }
  if (op_class(n.op) == OpClass::Reduce || n.op == OpKind::FillLike) return true;  // no gather fuses inside
  for (ValueId in : n.inputs)
    if (!pulled_gathers(body, in, loop_vars, edges, out)) return false;
  return true;
}

}  // namespace

bool is_splat_constant(const Node& n) {
  if (n.op != OpKind::Const || !n.attrs.value.has_value()) return false;
  const Tensor& value = n.attrs.value;
  const size_t bytes = dtype_size(value.dtype());
  const auto* data = static_cast<const unsigned char*>(detail::impl_of(value)->data);
  for (int64_t k = 1; k < value.num_elements(); ++k)
    if (std::memcmp(data, data + static_cast<size_t>(k) * bytes, bytes) != 0) return false;
  return true;
}

std::vector<SegmentPull> loop_invariant_segment_pulls(const ScopePlan& body, int64_t loop_vars) {
  const Graph& g = *body.graph;
  std::vector<SegmentPull> pulls;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if ((n.op != OpKind::UnsortedSegmentSum && n.op != OpKind::UnsortedSegmentMax) || !compiled_scatter(g, n)) continue;
    const Shape& out = n.outputs[0].shape;
    const TensorType& ids = g.type(n.inputs[1]);
    const Shape& updates = g.type(n.inputs[2]).shape;
    if (!out.is_fully_defined() || !updates.is_fully_defined() || out.rank() < 1 || ids.rank_unknown || ids.shape.rank() != 1 ||
        !is_index_dtype(ids.dtype))
      continue;
    const int64_t edges = updates[0];
    if (edges < kMinPulledEdges || edges > kInt32Max || out[0] > kInt32Max || ids.shape[0] != edges) continue;
    if (!is_splat_constant(g.nodes[n.inputs[0].node]) || body.at(n.inputs[0]).storage == ValueStorage::Fused) continue;
    const int64_t ids_param = loop_capture(g, n.inputs[1], loop_vars);
    if (ids_param < 0) continue;
    SegmentPull pull{i, static_cast<size_t>(ids_param), {}};
    if (!pulled_gathers(body, n.inputs[2], loop_vars, edges, pull)) continue;
    pulls.push_back(std::move(pull));
  }
  return pulls;
}

void for_each_segment_pull(const ScopePlan& s, const std::function<void(const Graph& body, uint32_t node)>& f) {
  for_each_loop_body(s, [&](const ScopePlan& body, int64_t loop_vars) {
    for (const SegmentPull& p : loop_invariant_segment_pulls(body, loop_vars)) f(*body.graph, p.node);
  });
}

}  // namespace ag::jit
