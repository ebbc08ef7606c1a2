// Planning rules that spare a copy of a whole buffer: a slice update's new box computed straight
// into the update's result (Box), and a While body's state written into the loop's second buffer
// (twin) instead of being copied back into the first one every iteration.
//
// A Jacobi step `u = u.at[1:-1, 1:-1].set(stencil(u))` in a staged loop was three passes over the
// grid (the stencil into a temporary, the temporary into u's box) where a hand-written solver
// makes one: read one buffer, write the other, swap (bench/apps/heat_stencil.cpp).
#include "plan_updates.h"

#include <algorithm>

#include "fusion.h"

namespace ag::jit {
namespace {

// Whether operand `v` of a loop is `buffer` or a view of it, or is fused and reads one.
bool operand_reads(const Graph& g, const ScopePlan& s, ValueId v, ValueId buffer) {
  if (s.buffer_of(v) == buffer) return true;
  return s.at(v).storage == ValueStorage::Fused && reads_buffer(g, s, v, buffer);
}

}  // namespace

bool reads_buffer(const Graph& g, const ScopePlan& s, ValueId v, ValueId buffer) {
  const Node& n = g.nodes[v.node];
  return std::any_of(n.inputs.begin(), n.inputs.end(), [&](ValueId in) { return operand_reads(g, s, in, buffer); });
}

namespace {

// Whether value `v`, operand of node `into` (of the same rank), can be computed straight into
// its place in `into`'s result; `others_read`: whether other nodes may read it there too (it is
// read from `into`'s buffer, which liveness then keeps alive for them: plan.cpp).
bool boxable_operand(const Graph& g, const ScopePlan& s, ValueId v, const Node& into, bool others_read) {
  const Node& producer = g.nodes[v.node];
  // An elementwise loop of its own whose walk can take the box's strides (a check's walk names
  // its value's own elements; its error would name the box's).
  if (s.at(v).storage != ValueStorage::Arena || !is_elementwise_expr(producer.op) || producer.op == OpKind::CheckNumerics ||
      producer.outputs.size() != 1 || static_bytes(producer.outputs[0]) < 0 ||
      producer.outputs[0].shape.rank() != into.outputs[0].shape.rank())
    return false;
  // Read by `into` once, and by others only if allowed: then, unless its place is one contiguous
  // run of `into`'s buffer, only by loops (which walk its strides; a copy or a kernel would read
  // it as if it were laid out alone).
  const bool contiguous = into.op == OpKind::Concat && contiguous_pieces(into);
  int64_t reads = 0, by_into = 0;
  bool strided_reads_ok = true;
  for (const Node& c : g.nodes)
    for (uint32_t k = 0; k < c.inputs.size(); ++k) {
      if (c.inputs[k] != v) continue;
      ++reads;
      if (&c == &into) ++by_into;
      else if (!consumes_elementwise(c, k)) strided_reads_ok = false;
    }
  const bool others_ok = others_read && (contiguous || strided_reads_ok);
  return by_into == 1 && (others_ok || reads == 1) && std::find(g.results.begin(), g.results.end(), v) == g.results.end();
}

// Whether concat `v`, a piece of concat `into`, can be computed in its place there (its own
// pieces then written straight into `into`'s buffer): a temporary read by `into` alone, whose
// place is one contiguous run of `into`'s buffer (every dim of `into` before its axis is 1), so
// that its own row-major layout is that run's.
bool boxable_concat(const Graph& g, const ScopePlan& s, ValueId v, uint32_t into) {
  const Node& c = g.nodes[v.node];
  if (c.op != OpKind::Concat || s.at(v).storage != ValueStorage::Arena || static_bytes(c.outputs[0]) < 0 ||
      !contiguous_pieces(g.nodes[into]))
    return false;
  int64_t reads = 0;
  for (const Node& n : g.nodes)
    for (ValueId in : n.inputs) reads += in == v;
  return reads == 1 && std::find(g.results.begin(), g.results.end(), v) == g.results.end();
}

}  // namespace

int64_t concat_axis(const Node& concat) {
  const int64_t rank = concat.outputs[0].shape.rank();
  return concat.attrs.axis < 0 ? concat.attrs.axis + rank : concat.attrs.axis;
}

bool contiguous_pieces(const Node& concat) {
  const Shape& shape = concat.outputs[0].shape;
  for (int64_t k = 0; k < concat_axis(concat); ++k)
    if (shape[k] != 1) return false;
  return true;
}

bool boxable_update(const Graph& g, const ScopePlan& s, uint32_t update) {
  const Node& u = g.nodes[update];
  if (u.op != OpKind::SliceUpdate || static_bytes(u.outputs[0]) < 0) return false;
  return boxable_operand(g, s, u.inputs[1], u, /*others_read=*/false);
}

bool prefer_twin_to_in_place(const Graph& g, const ScopePlan& s, uint32_t update, int64_t loop_vars) {
  if (s.kind != ScopeKind::WhileBody || !boxable_update(g, s, update)) return false;
  const Node& u = g.nodes[update];
  const ValueId x = s.buffer_of(u.inputs[0]);
  const auto p = std::find(g.params.begin(), g.params.end(), x.node) - g.params.begin();
  if (p >= loop_vars || g.results.at(static_cast<size_t>(p)) != ValueId{update, 0}) return false;
  return reads_buffer(g, s, u.inputs[1], x);
}

bool twin_result(const Graph& g, const ScopePlan& s, size_t k, int64_t loop_vars) {
  if (s.kind != ScopeKind::WhileBody || static_cast<int64_t>(k) >= loop_vars) return false;
  const ValueId r = g.results[k];
  const TensorType& t = g.type(r);
  return t.dtype != DType::List && !is_register_type(t) && static_bytes(t) >= 0 && s.at(r).storage == ValueStorage::Arena;
}

void box_updates(const Graph& g, ScopePlan& s) {
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    // A concat's pieces computed straight into their places in its result (static shapes): a
    // stencil's segments (concat_segments.h) written where they go, no copy, and read there by
    // any other consumer. Into a temporary (Arena) too: its interval in the arena then begins at
    // its first piece (plan.cpp, layout_arena) and lasts through the pieces' last reads.
    if (g.nodes[i].op == OpKind::Concat && static_bytes(g.nodes[i].outputs[0]) >= 0 &&
        (s.values[i][0].storage == ValueStorage::Dest || s.values[i][0].storage == ValueStorage::Arena)) {
      for (ValueId piece : g.nodes[i].inputs) {
        if (!boxable_operand(g, s, piece, g.nodes[i], /*others_read=*/true) && !boxable_concat(g, s, piece, i)) continue;
        ValuePlan& v = s.values[piece.node][piece.index];
        v.storage = ValueStorage::Box;
        v.root = {i, 0};
      }
      continue;
    }
    // Only into a buffer nothing else reads before the update: a destination (the result's
    // sink, or a loop's second buffer). An update in place would be written over a buffer
    // its own loop may still read.
    if (g.nodes[i].op != OpKind::SliceUpdate || s.values[i][0].storage != ValueStorage::Dest || !boxable_update(g, s, i))
      continue;
    ValuePlan& v = s.values[g.nodes[i].inputs[1].node][g.nodes[i].inputs[1].index];
    v.storage = ValueStorage::Box;
    v.root = {i, 0};
  }
}

void mark_twins(const Graph& g, ScopePlan& s) {
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != OpKind::While) continue;
    const ScopePlan& body = *s.children[i].at(1);
    const int64_t nvars = g.nodes[i].attrs.loop_vars();
    for (int64_t k = 0; k < nvars; ++k) {
      const ValuePlan& r = body.at(body.graph->results[static_cast<size_t>(k)]);
      if (r.storage == ValueStorage::Dest && r.dest == k) s.values[i][static_cast<size_t>(k)].twin_offset = 0;
    }
  }
}

}  // namespace ag::jit
