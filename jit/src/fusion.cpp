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
//
// Two rules let a pairwise computation (n-body's accelerations, a distance matrix) become one or
// two loop nests instead of one per op:
//   - a reduction over a few elements (kMaxInlineReduction, static) fuses into its consumer as an
//     inline reduction (evaluated per element of the consumer's loop, the reduced elements
//     unrolled), when the consumer does not broadcast it; one level deep: no inline reduction
//     inside another;
//   - a value read at the same place by several consumers (the same group, the same evaluation
//     context, none broadcasting it) fuses: each reading evaluates it at the same index and LLVM
//     merges the copies; a cheap value that reads at most one input of its own size (`pos[None] -
//     pos[:, None]` reads none, `x + bias` one) fuses into each of several groups, recomputed
//     there rather than written and read back.
// Sizes are compared on static dims: an unknown dim is taken not to broadcast.
//
// A compiled scatter (compiled_scatter) is a root whose loop walks its updates: their producers
// fuse as into an elementwise op of the updates' shape, and a gather by a vector of indices fuses
// too (fuses_gather), read at the loop's own index; a fill as its base is written by its loop.
#include "fusion.h"

#include <algorithm>
#include <limits>

#include "ag/graph/passes.h"

namespace ag::jit {
namespace {

bool is_fill(OpKind op) { return op == OpKind::Fill || op == OpKind::FillLike; }
bool is_reduction(OpKind op) { return op_class(op) == OpClass::Reduce; }

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

// Whether input shape `v` of a value evaluated in the loop of reduction `r` repeats along an axis
// `r` reduces (a row's mean subtracted inside a row reduction): read there, the reduction's loop
// walks a buffer whose stride along the reduced axis is 0.
bool repeats_along_reduced_axes(const Graph& g, const Node& r, const Shape& v) {
  const OpClass k = op_class(r.op);
  if (k != OpClass::Reduce && k != OpClass::ArgReduce) return false;
  const Shape& loop = g.type(r.inputs[0]).shape;
  const int64_t rank = loop.rank(), off = rank - v.rank();
  auto reduced = [&](int64_t a) {
    if (k == OpClass::ArgReduce) return a == (r.attrs.axis < 0 ? r.attrs.axis + rank : r.attrs.axis);
    const Shape& axes = r.attrs.axes();
    return std::find(axes.begin(), axes.end(), a) != axes.end();
  };
  for (int64_t a = 0; a < rank; ++a)
    if (reduced(a) && loop[static_cast<size_t>(a)] != 1 && (a < off || v[static_cast<size_t>(a - off)] == 1)) return true;
  return false;
}

// A value of `out` elements computed from inputs at least this many times smaller expands them
// (broadcasting): recomputing it where it is read is cheaper than writing and reading it back.
constexpr int64_t kExpansion = 2;
// At most this many groups recompute one shared cheap value.
constexpr size_t kMaxSharedConsumers = 3;

// Marks a value fused into several groups: nothing else fuses into it but fills.
constexpr uint32_t kShared = std::numeric_limits<uint32_t>::max();

}  // namespace

bool consumes_elementwise(const Node& n, uint32_t input) {
  if (is_elementwise_expr(n.op)) return n.op != OpKind::FillLike;  // FillLike reads only a shape
  const OpClass c = op_class(n.op);
  return (c == OpClass::Reduce || c == OpClass::ArgReduce) && input == 0;
}

bool updates_in_place(const Graph& g, const Node& n) {
  if ((n.op != OpKind::AssignAddVariable && n.op != OpKind::AssignSubVariable) || n.inputs.size() != 1 || n.outputs.size() != 1)
    return false;
  const TensorType& var = n.outputs[0];
  const TensorType& operand = g.type(n.inputs[0]);
  const DType d = var.dtype;
  if (operand.dtype != d || !(d == DType::Float32 || d == DType::Float64 || d == DType::Int32 || d == DType::Int64)) return false;
  if (var.shape.rank() == 0 || var.shape.num_elements() < kMinInPlaceUpdate || operand.shape.rank() > var.shape.rank())
    return false;
  for (int64_t d0 : var.shape)
    if (d0 < 0) return false;  // static shapes only: the loop is over the variable's traced shape
  const int64_t lead = var.shape.rank() - operand.shape.rank();
  for (int64_t j = 0; j < operand.shape.rank(); ++j) {
    const int64_t o = operand.shape[static_cast<size_t>(j)], v = var.shape[static_cast<size_t>(lead + j)];
    if (o != v && o != 1) return false;
  }
  return true;
}

bool compiled_scatter(const Graph& g, const Node& n) {
  if (n.op != OpKind::TensorScatterUpdate && n.op != OpKind::TensorScatterAdd && n.op != OpKind::UnsortedSegmentSum &&
      n.op != OpKind::UnsortedSegmentMax)
    return false;
  const DType d = n.outputs[0].dtype;
  return n.inputs.size() == 3 && !n.outputs[0].rank_unknown && g.type(n.inputs[2]).shape.rank() == n.outputs[0].shape.rank() &&
         (d == DType::Float32 || d == DType::Float64 || d == DType::Int32 || d == DType::Int64);
}

bool scatter_reads_elementwise(const Graph& g, const Node& n, uint32_t input, const Node& producer) {
  return compiled_scatter(g, n) && (input == 2 || (input == 0 && is_fill(producer.op)));
}

bool fuses_gather(const Graph& g, const Node& n, const Node& scatter) {
  if (n.op != OpKind::Gather || n.inputs.size() != 2 || n.outputs.size() != 1 || !compiled_scatter(g, scatter)) return false;
  const TensorType& params = g.type(n.inputs[0]);
  const TensorType& indices = g.type(n.inputs[1]);
  if (params.rank_unknown || indices.rank_unknown || params.shape.rank() < 1 || indices.shape.rank() != 1) return false;
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + params.shape.rank() : n.attrs.axis;
  if (axis != 0) return false;
  const Shape& out = n.outputs[0].shape;
  return &g.nodes[scatter.inputs[2].node] == &n || (out.is_fully_defined() && out == g.type(scatter.inputs[2]).shape);
}

bool is_cheap_to_recompute(OpKind op) { return is_elementwise_expr(op) && op_info(op).cost == OpCost::cheap; }

int64_t inline_reduction_count(const Graph& g, const Node& n) {
  if (!is_reduction(n.op) || n.inputs.empty()) return 0;
  const Shape& x = g.type(n.inputs[0]).shape;
  int64_t count = 1;
  for (int64_t a : n.attrs.axes()) {
    const int64_t d = a < 0 || a >= x.rank() ? -1 : x[static_cast<size_t>(a)];
    if (d < 1) return 0;  // unknown, or empty: the reduction's own loop handles it
    count *= d;
  }
  return count <= kMaxInlineReduction ? count : 0;
}

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
      const bool elementwise =
          consumes_elementwise(c, k) || (k == 0 && updates_in_place(g, c)) || scatter_reads_elementwise(g, c, k, g.nodes[v.node]);
      if (!elementwise || !loops) fusible_uses[v.node] = false;
    }
  }
  std::vector<bool> is_result(n, false);
  for (ValueId r : g.results) is_result[r.node] = true;
  // Prefix count of side-effecting nodes, to ask "is there one between i and j".
  std::vector<uint32_t> effects_before(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) effects_before[i + 1] = effects_before[i] + (has_side_effects(g.nodes[i]) ? 1 : 0);

  // Consumers come after their producers: deciding from the last node back, a value's consumer
  // already knows its group (root) and where it is evaluated (context): the node whose index
  // space its consumers read it in — the group's root, or the inline reduction it feeds.
  std::vector<uint32_t> root(n), context(n);
  std::vector<int> recomputed(n, 0);  // per root: broadcast ops recomputed in its loop
  auto is_fused = [&](uint32_t i) { return !values[i].empty() && values[i][0].storage == ValueStorage::Fused; };
  // Where consumer c reads its operands: a reduction (a root or inline) walks its operand's index
  // space; an elementwise op reads them where it is itself evaluated.
  auto reading_context = [&](uint32_t c) { return is_reduction(g.nodes[c].op) || !is_fused(c) ? c : context[c]; };
  auto space = [&](uint32_t ctx) -> const Shape& {
    const Node& cn = g.nodes[ctx];
    const OpClass k = op_class(cn.op);
    if (compiled_scatter(g, cn)) return g.type(cn.inputs[2]).shape;  // its loop walks the updates
    return k == OpClass::Reduce || k == OpClass::ArgReduce ? g.type(cn.inputs[0]).shape : cn.outputs[0].shape;
  };
  auto inside_inline_reduction = [&](uint32_t ctx) { return is_reduction(g.nodes[ctx].op) && is_fused(ctx); };
  for (uint32_t i = n; i-- > 0;) {
    root[i] = context[i] = i;
    const Node& p = g.nodes[i];
    const bool reduction = inline_reduction_count(g, p) > 0;
    const bool gather = p.op == OpKind::Gather;
    if (!(is_elementwise_expr(p.op) || is_inlined_draw(p) || reduction || gather) || p.outputs.size() != 1 || is_result[i] ||
        !fusible_uses[i])
      continue;
    ValuePlan& vp = values[i][0];
    if (vp.storage != ValueStorage::Arena && vp.storage != ValueStorage::Owned) continue;
    const std::vector<uint32_t>& cs = consumers[i];
    if (cs.empty()) continue;
    // An op that raises on bad data (integer division by zero): moving it past a side effect
    // would reorder the error and the side effect. (Dims are checked before the loop runs.)
    if (may_raise_on_values(p)) {
      const uint32_t last = *std::max_element(cs.begin(), cs.end());
      if (effects_before[last] != effects_before[i + 1]) continue;
    }
    if (is_fill(p.op)) {  // a fill reads nothing: evaluating it anywhere is free
      vp.storage = ValueStorage::Fused;
      continue;
    }
    // One place: every consumer in the same group, reading it in the same context.
    const uint32_t r = root[cs[0]], ctx = reading_context(cs[0]);
    if (gather) {
      // A gather fuses only as its scatter's updates or an operand of them, at the same index
      // (its index errors are found first on the scatter's error path: lower_scatter.cpp).
      if (cs.size() != 1 || r == kShared || ctx != r || !fuses_gather(g, p, g.nodes[r])) continue;
      root[i] = context[i] = r;
      vp.storage = ValueStorage::Fused;
      continue;
    }
    // A compiled scatter raises its own index errors as it goes; the eager kernel sees its
    // updates computed whole first, so nothing fused into it may raise or check.
    const bool into_scatter =
        std::any_of(cs.begin(), cs.end(), [&](uint32_t c) { return root[c] != kShared && compiled_scatter(g, g.nodes[root[c]]); });
    if (into_scatter && (may_raise_on_values(p) || p.op == OpKind::CheckNumerics)) continue;
    // An update in place runs its loop holding the variable's lock: nothing in it may raise
    // (the error path would leave the lock held), nor check.
    if (r != kShared && updates_in_place(g, g.nodes[r]) && (may_raise_on_values(p) || p.op == OpKind::CheckNumerics)) continue;
    const bool one_place = r != kShared && std::all_of(cs.begin(), cs.end(), [&](uint32_t c) {
                             return root[c] == r && reading_context(c) == ctx;
                           });
    if (one_place) {
      const bool broadcast = broadcasts_into(p.outputs[0].shape, space(ctx));
      if (reduction) {
        // Evaluated once per element of its consumer's loop, never nested in another.
        if (broadcast || inside_inline_reduction(ctx)) continue;
      } else if (cs.size() > 1 && (is_inlined_draw(p) || p.op == OpKind::CheckNumerics || broadcast)) {
        continue;  // several readings merge only as the same pure expression at the same index
      } else if (broadcast) {
        if (!is_cheap_to_recompute(p.op) || recomputed[r] >= kMaxRecomputedPerGroup) continue;
        ++recomputed[r];
      }
      root[i] = r;
      context[i] = ctx;
      vp.storage = ValueStorage::Fused;
      continue;
    }
    // Several groups: only a cheap value that reads at most one input of its own size (the
    // others expanded: broadcast, or fills), recomputed in each. Each group then reads that input
    // where it would have read the value: never more memory traffic than writing the value and
    // reading it back, one loop nest fewer (a bias add feeding an activation and its gradient's
    // mask, a shifted logit feeding exp and the loss).
    if (reduction || !is_cheap_to_recompute(p.op) || p.op == OpKind::CheckNumerics || cs.size() > kMaxSharedConsumers)
      continue;
    const int64_t elements = p.outputs[0].shape.num_elements();
    const auto read_in_full = std::count_if(p.inputs.begin(), p.inputs.end(), [&](ValueId in) {
      const int64_t e = g.type(in).shape.num_elements();
      return !is_fill(g.nodes[in.node].op) && !(e >= 0 && e * kExpansion <= elements);
    });
    const bool broadcast = std::any_of(cs.begin(), cs.end(), [&](uint32_t c) {
      return root[c] == kShared || broadcasts_into(p.outputs[0].shape, space(reading_context(c)));
    });
    // A value that reads an input of its own size goes into a reduction's loop only if its other
    // inputs do not repeat along the reduced axes: the reduction would lose its vector code (a
    // layer norm's variance over x - mean(x) ran as a scalar loop; x - mean written once kept it).
    // One that expands all its inputs does (n-body's differences, summed over j).
    const bool repeats_in_a_reduction = !broadcast && read_in_full == 1 && std::any_of(cs.begin(), cs.end(), [&](uint32_t c) {
      const Node& r = g.nodes[reading_context(c)];  // no consumer is shared (`broadcast`)
      return std::any_of(p.inputs.begin(), p.inputs.end(), [&](ValueId in) {
        return !is_fill(g.nodes[in.node].op) && g.type(in).shape.rank() > 0 && repeats_along_reduced_axes(g, r, g.type(in).shape);
      });
    });
    if (elements <= 0 || read_in_full > 1 || broadcast || repeats_in_a_reduction) continue;
    root[i] = context[i] = kShared;
    vp.storage = ValueStorage::Fused;
  }

  // The groups, for inspection: a fused value lists the roots it is evaluated in.
  std::vector<std::vector<uint32_t>> groups(n);
  for (uint32_t i = n; i-- > 0;) {
    if (!is_fused(i)) continue;
    for (uint32_t c : consumers[i]) {
      for (uint32_t r : groups[c].empty() ? std::vector<uint32_t>{c} : groups[c]) {
        if (std::find(groups[i].begin(), groups[i].end(), r) == groups[i].end()) groups[i].push_back(r);
        if (groups[r].empty()) groups[r].push_back(r);
      }
    }
  }
  return groups;
}

}  // namespace ag::jit
