// Planning a concrete function: storage classes, slots, result destinations, liveness and the
// global node table, scope by scope (a scope per If branch / While cond and body instance).
#include "plan.h"
#include "segment_pulls.h"

#include <algorithm>

#include "arena.h"
#include "fusion.h"
#include "matmul_forms.h"
#include "concat_segments.h"
#include "per_element_loops.h"
#include "plan_updates.h"

namespace ag::jit {

int64_t static_bytes(const TensorType& t) {
  const int64_t n = t.shape.num_elements();
  return n < 0 ? -1 : n * static_cast<int64_t>(dtype_size(t.dtype));
}

bool is_register_type(const TensorType& t) { return t.dtype != DType::List && t.shape.num_elements() == 1; }

bool is_elementwise_expr(OpKind op) {
  // Identity is a view here; fills broadcast a constant and fuse like elementwise ops.
  return (is_elementwise(op) && op != OpKind::Identity && op != OpKind::StopGradient) || op == OpKind::Fill ||
         op == OpKind::FillLike;
}

bool writes_in_place(OpKind op) {
  return op == OpKind::SliceUpdate || op == OpKind::AllReduce || op == OpKind::CollectiveBroadcast;
}

bool is_inlined_draw(const Node& n) {
  return n.op == OpKind::RandomUniform && is_floating(n.attrs.dtype);
}

bool is_view_op(OpKind op) { return op_info(op).cost == OpCost::view; }


namespace {

class Planner {
 public:
  explicit Planner(Program& p) : prog_(p) {}

  std::unique_ptr<ScopePlan> plan(const Graph& g, ScopeKind kind, const std::vector<int32_t>& param_slots) {
    auto s = std::make_unique<ScopePlan>();
    s->graph = &g;
    s->kind = kind;
    s->first_node_id = static_cast<int32_t>(prog_.nodes.size());
    prog_.nodes.resize(prog_.nodes.size() + g.nodes.size());
    const uint32_t n = static_cast<uint32_t>(g.nodes.size());
    s->values.resize(n);
    s->free_after.resize(n);
    s->children.resize(n);
    s->scratch_offset.assign(n, 0);
    choose_storage(g, *s, param_slots);
    view_slices(g, *s);
    s->groups = fuse_elementwise(g, s->values);
    // In-place updates first (each turns an update into a view of its input's buffer, so
    // liveness is computed again), then destinations: a result that is an in-place update makes
    // its input's buffer the result's. A scope without updates computes liveness once.
    const bool updates = std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return writes_in_place(n.op); });
    if (updates) {
      compute_liveness(g, *s);
      while (update_in_place(g, *s)) {
        reset_liveness(*s);
        compute_liveness(g, *s);
      }
      reset_liveness(*s);
    }
    choose_destinations(g, *s);
    box_updates(g, *s);
    donate_to_assignments(g, *s);
    compute_liveness(g, *s);
    fill_node_infos(g, *s);
    plan_children(g, *s);
    mark_twins(g, *s);
    layout_arena(g, *s);
    return s;
  }

 private:
  int32_t new_slot() { return prog_.num_slots++; }

  // A smaller value is copied: that costs less than the call slot holding a borrowed one (and a
  // program without slots keeps the cached call's shortest path).
  static constexpr int64_t kMinBorrowedBytes = 4096;

  // Whether node i reads a Variable's value in place (ValueStorage::Borrowed) instead of
  // copying it: a read, or an assignment whose result is used, in the function's own scope (in a
  // loop body each iteration would hold one more borrow). An Adam step read, and copied back,
  // each weight and both its moments: 13% of an MLP's training step in memmove.
  static bool borrows_variable(const Graph& g, const ScopePlan& s, uint32_t i, const std::vector<bool>& used) {
    const OpKind op = g.nodes[i].op;
    if (s.kind != ScopeKind::Function) return false;
    const bool assigns = op == OpKind::AssignVariable || op == OpKind::AssignAddVariable || op == OpKind::AssignSubVariable;
    return op == OpKind::ReadVariable || (assigns && used[i]);
  }

  // A value freed (Owned) or let go (Borrowed) after its last use.
  static bool released_after_last_use(const ValuePlan& vp) {
    return (vp.storage == ValueStorage::Owned && !vp.donated) || vp.storage == ValueStorage::Borrowed;
  }

  void choose_storage(const Graph& g, ScopePlan& s, const std::vector<int32_t>& param_slots) {
    for (size_t p = 0; p < g.params.size(); ++p) {
      ValuePlan& vp = s.values[g.params[p]].emplace_back();
      vp.storage = ValueStorage::Param;
      if (g.nodes[g.params[p]].outputs[0].dtype == DType::List) vp.slot = param_slots.at(p);
    }
    std::vector<bool> used(g.nodes.size(), false);  // read by a node or a result
    for (const Node& n : g.nodes)
      for (ValueId v : n.inputs) used[v.node] = true;
    for (ValueId r : g.results) used[r.node] = true;
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      const Node& node = g.nodes[i];
      if (node.op == OpKind::Placeholder) continue;
      auto& outs = s.values[i];
      outs.resize(node.outputs.size());
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const TensorType& t = node.outputs[k];
        ValuePlan& vp = outs[k];
        if (t.dtype == DType::List) {
          vp.storage = ValueStorage::Slot;
          vp.slot = new_slot();
        } else if (is_register_type(t)) {
          vp.storage = ValueStorage::Reg;
        } else if (node.op == OpKind::Const) {
          vp.storage = ValueStorage::Const;
        } else if (borrows_variable(g, s, i, used) && static_bytes(t) >= kMinBorrowedBytes) {
          vp.storage = ValueStorage::Borrowed;
          vp.slot = new_slot();
        } else if (is_view_op(node.op) && s.at(node.inputs[0]).storage != ValueStorage::Reg) {
          vp.storage = ValueStorage::View;
          vp.root = s.buffer_of(node.inputs[0]);
        } else {
          vp.storage = static_bytes(t) >= 0 ? ValueStorage::Arena : ValueStorage::Owned;
        }
      }
    }
  }

  // Whether a slice's elements are one contiguous run of its input's (static shapes): the dims
  // after the last cut one are whole (by definition), those before it 1.
  static bool contiguous_slice(const Graph& g, const Node& n) {
    if (n.op != OpKind::Slice) return false;
    const Shape& in = g.type(n.inputs[0]).shape;
    const Shape& out = n.outputs[0].shape;
    if (!in.is_fully_defined() || !out.is_fully_defined() || in.rank() != out.rank()) return false;
    int64_t last_cut = in.rank() - 1;
    while (last_cut >= 0 && out[last_cut] == in[last_cut]) --last_cut;
    for (int64_t j = 0; j < last_cut; ++j)
      if (out[j] != 1) return false;
    return true;
  }

  // A slice that only loops reading element by element consume (elementwise ops, reductions) is
  // read in place through its input's strides: a View of the input's buffer, no copy
  // (lower_layout.cpp, slice; the walk's strided leaves: lower_fused.cpp). A stencil's shifted
  // reads of its grid then cost nothing but their loads.
  void view_slices(const Graph& g, ScopePlan& s) {
    std::vector<bool> read(g.nodes.size(), false), elementwise_reads(g.nodes.size(), true);
    for (ValueId r : g.results) elementwise_reads[r.node] = false;
    for (const Node& c : g.nodes)
      for (uint32_t k = 0; k < c.inputs.size(); ++k) {
        read[c.inputs[k].node] = true;
        if (!consumes_elementwise(c, k)) elementwise_reads[c.inputs[k].node] = false;
      }
    // A squeeze read only by loops passes its reads through (its view keeps the slice's strides:
    // an unrolled reduction reads each operand as squeeze(slice(x))).
    // A concat copies a contiguous slice's rows straight from its input (a roll: the two
    // slices of a ring, concatenated).
    std::vector<bool> loop_reads_through(g.nodes.size(), true);
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      const Node& c = g.nodes[i];
      const bool through_squeeze = c.op == OpKind::Squeeze && read[i] && elementwise_reads[i];
      for (uint32_t k = 0; k < c.inputs.size(); ++k) {
        const bool copied_whole = c.op == OpKind::Concat && contiguous_slice(g, g.nodes[c.inputs[k].node]);
        if (!consumes_elementwise(c, k) && !through_squeeze && !copied_whole) loop_reads_through[c.inputs[k].node] = false;
      }
    }
    for (ValueId r : g.results) loop_reads_through[r.node] = false;
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op != OpKind::Slice || !read[i] || !loop_reads_through[i]) continue;
      ValuePlan& vp = s.values[i][0];
      if (vp.storage != ValueStorage::Arena && vp.storage != ValueStorage::Owned) continue;
      const ValueId in = g.nodes[i].inputs[0];
      const ValuePlan& src = s.at(in);
      const ValueStorage st = src.storage;
      if (st != ValueStorage::Arena && st != ValueStorage::Owned && st != ValueStorage::Param && st != ValueStorage::Const &&
          st != ValueStorage::View && st != ValueStorage::Borrowed)
        continue;
      vp.storage = ValueStorage::View;
      vp.root = s.buffer_of(in);
    }
    reroot_views(s);
  }

  // A view planned before its root became a view itself (a squeeze of a slice made a view here,
  // a slice of an update that update_in_place then made a view of its input's buffer) names the
  // buffer's owner as its root instead: liveness extends only a view's root, so a view of a view
  // left the owner free for reuse while it was still read (random graphs 4016..4019: a slice of
  // an in-place slice update, read by a fused loop later, found its rows overwritten).
  static void reroot_views(ScopePlan& s) {
    for (auto& outs : s.values)
      for (ValuePlan& vp : outs)
        while (vp.storage == ValueStorage::View && s.at(vp.root).storage == ValueStorage::View) vp.root = s.at(vp.root).root;
  }

  // Results of functions and If branches are written straight into their sinks when the value
  // owning their buffer is computed here (each buffer serves one result; the others copy). A
  // While body's result computed in a buffer of its own goes into the loop's second buffer,
  // which then becomes the loop variable's (plan_updates.h, twin_result).
  void choose_destinations(const Graph& g, ScopePlan& s) {
    const bool body = s.kind == ScopeKind::WhileBody;
    if (s.kind != ScopeKind::Function && s.kind != ScopeKind::IfBranch && !body) return;
    for (size_t k = 0; k < g.results.size(); ++k) {
      if (body && !twin_result(g, s, k, loop_vars_)) continue;
      const ValueId owner = s.buffer_of(g.results[k]);
      ValuePlan& root = s.values[owner.node][owner.index];
      if (root.storage != ValueStorage::Arena && root.storage != ValueStorage::Owned) continue;
      root.storage = ValueStorage::Dest;
      root.dest = static_cast<int32_t>(k);
    }
  }

  // A value computed only to be assigned to a Variable (an optimizer's new moment, m * b + g *
  // (1 - b)) in the function's own scope is computed in a buffer of its own that the assignment
  // makes the variable's value (agc_rt_var_assign_owned): no copy into the variable's old buffer.
  // Its type must be the variable's, and nothing else may read it (the variable's next
  // assignment may write into it).
  static void donate_to_assignments(const Graph& g, ScopePlan& s) {
    if (s.kind != ScopeKind::Function) return;
    std::vector<int> reads(g.nodes.size(), 0);
    for (const Node& n : g.nodes)
      for (ValueId v : n.inputs) ++reads[v.node];
    for (ValueId r : g.results) reads[r.node] += 2;
    for (const auto& outs : s.values)
      for (const ValuePlan& vp : outs)
        if (vp.storage == ValueStorage::View || vp.storage == ValueStorage::Box) reads[vp.root.node] += 2;
    for (const Node& n : g.nodes) {
      if (n.op != OpKind::AssignVariable) continue;
      const ValueId x = n.inputs[0];
      ValuePlan& vp = s.values[x.node][x.index];
      const TensorType& t = g.type(x);
      if (vp.storage != ValueStorage::Arena || reads[x.node] != 1 || g.nodes[x.node].outputs.size() != 1 ||
          t.dtype != n.outputs[0].dtype || !t.shape.is_fully_defined() || t.shape != n.outputs[0].shape)
        continue;
      vp.storage = ValueStorage::Owned;
      vp.donated = true;
    }
  }

  static void reset_liveness(ScopePlan& s) {
    for (auto& outs : s.values)
      for (ValuePlan& vp : outs) vp.last_use = -1;
    for (auto& f : s.free_after) f.clear();
    s.free_at_end.clear();
  }

  void compute_liveness(const Graph& g, ScopePlan& s) {
    const int32_t n = static_cast<int32_t>(g.nodes.size());
    // Where a node is evaluated: its own index, or for a fused node its consumer's position.
    std::vector<int32_t> pos(n);
    for (int32_t i = 0; i < n; ++i) pos[i] = i;
    std::vector<std::vector<int32_t>> consumers(n);
    for (int32_t i = 0; i < n; ++i)
      for (ValueId v : g.nodes[i].inputs) consumers[v.node].push_back(i);
    for (int32_t i = n - 1; i >= 0; --i)
      if (!s.values[i].empty() && s.values[i][0].storage == ValueStorage::Fused)
        for (int32_t c : consumers[i]) pos[i] = std::max(pos[i], pos[c]);
    auto use = [&](ValueId v, int32_t at) {
      ValuePlan& vp = s.values[v.node][v.index];
      vp.last_use = std::max(vp.last_use, at);
    };
    for (int32_t i = 0; i < n; ++i)
      for (ValueId v : g.nodes[i].inputs) use(v, pos[i]);
    for (ValueId r : g.results) use(r, n);
    for (auto& outs : s.values)
      for (ValuePlan& vp : outs)
        if (vp.storage == ValueStorage::View || vp.storage == ValueStorage::Box) use(vp.root, vp.last_use);
    for (int32_t i = 0; i < n; ++i)
      for (uint32_t k = 0; k < s.values[i].size(); ++k) {
        const ValuePlan& vp = s.values[i][k];
        if (!released_after_last_use(vp)) continue;
        if (vp.last_use == n) s.free_at_end.push_back({static_cast<uint32_t>(i), k});
        else s.free_after[std::max(vp.last_use, i)].push_back({static_cast<uint32_t>(i), k});
      }
  }

  // x.at(box).set(v) writes v's box into x's own buffer when nothing reads x afterwards and the
  // buffer is this scope's to change: a temporary of the scope, or a While body's loop variable
  // (the loop's state buffer, which the body's result replaces anyway). The update then is a view
  // of x: no copy of x, and a loop-carried grid updated every iteration is never copied (the
  // write-back of a result that is the state buffer itself is skipped). Returns whether any was.
  bool update_in_place(const Graph& g, ScopePlan& s) {
    bool any = false;
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      const Node& node = g.nodes[i];
      const ValueStorage planned = s.values[i][0].storage;
      if (!writes_in_place(node.op) || (planned != ValueStorage::Arena && planned != ValueStorage::Owned)) continue;
      const ValuePlan& x = s.at(node.inputs[0]);
      // A collective hands the engine one contiguous buffer: its operand's own, not a view.
      if (node.op != OpKind::SliceUpdate && x.storage == ValueStorage::View) continue;
      const ValueId root = s.buffer_of(node.inputs[0]);
      const ValuePlan& owner = s.at(root);
      bool writable = owner.storage == ValueStorage::Arena || owner.storage == ValueStorage::Owned;
      if (owner.storage == ValueStorage::Param && s.kind == ScopeKind::WhileBody) {
        const auto p = std::find(g.params.begin(), g.params.end(), root.node) - g.params.begin();
        writable = p < loop_vars_;
      }
      if (!writable || owner.last_use != static_cast<int32_t>(i)) continue;
      if (prefer_twin_to_in_place(g, s, i, loop_vars_)) continue;
      // A slice update may not read the buffer it overwrites.
      if (node.op == OpKind::SliceUpdate && s.buffer_of(node.inputs[1]) == root) continue;
      ValuePlan& out = s.values[i][0];
      out.storage = ValueStorage::View;
      out.root = root;
      any = true;
    }
    if (any) reroot_views(s);
    return any;
  }

  // A List input may be moved from when this node is its last use and nobody else can see it:
  // a value of this scope, or a loop variable inside a While body (the body's result replaces it).
  bool consumable(const Graph& g, const ScopePlan& s, ValueId v, uint32_t node) const {
    const ValuePlan& vp = s.at(v);
    if (vp.last_use != static_cast<int32_t>(node) || vp.slot < 0) return false;
    const Node& producer = g.nodes[v.node];
    if (producer.op != OpKind::Placeholder) return true;
    if (s.kind != ScopeKind::WhileBody) return false;
    const auto it = std::find(g.params.begin(), g.params.end(), v.node);
    return static_cast<int64_t>(it - g.params.begin()) < loop_vars_;
  }

  void fill_node_infos(const Graph& g, const ScopePlan& s) {
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      NodeInfo& info = prog_.nodes[s.node_id(i)];
      const Node& node = g.nodes[i];
      info.node = &node;
      info.in_slots.resize(node.inputs.size(), -1);
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        info.input_types.push_back(g.type(node.inputs[k]));
        const ValuePlan& in = s.at(node.inputs[k]);
        if (g.type(node.inputs[k]).dtype != DType::List) continue;
        info.in_slots[k] = in.slot;
        if (consumable(g, s, node.inputs[k], i)) info.consume |= 1u << std::min<size_t>(k, 31);
      }
      if (!s.values[i].empty() && s.values[i][0].storage == ValueStorage::Slot) info.out_slot = s.values[i][0].slot;
    }
  }

  void plan_children(const Graph& g, ScopePlan& s) {
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      const Node& node = g.nodes[i];
      if (node.op == OpKind::If) {
        std::vector<int32_t> slots;
        for (size_t k = 1; k < node.inputs.size(); ++k) slots.push_back(s.at(node.inputs[k]).slot);
        for (const auto& branch : node.subgraphs) s.children[i].push_back(plan_sub(*branch, ScopeKind::IfBranch, slots, 0));
      } else if (node.op == OpKind::While) {
        const int64_t nvars = node.attrs.loop_vars();
        std::vector<int32_t> slots;
        for (size_t k = 0; k < node.inputs.size(); ++k)
          slots.push_back(static_cast<int64_t>(k) < nvars ? s.values[i][k].slot : s.at(node.inputs[k]).slot);
        s.children[i].push_back(plan_sub(*node.subgraphs[0], ScopeKind::WhileCond, slots, nvars));
        s.children[i].push_back(plan_sub(*node.subgraphs[1], ScopeKind::WhileBody, slots, nvars));
      }
    }
  }

  std::unique_ptr<ScopePlan> plan_sub(const Graph& g, ScopeKind kind, const std::vector<int32_t>& slots, int64_t nvars) {
    const int64_t saved = loop_vars_;
    loop_vars_ = nvars;
    auto child = plan(g, kind, slots);
    loop_vars_ = saved;
    return child;
  }

  void layout_arena(const Graph& g, ScopePlan& s) {
    ArenaLayout arena;
    // A concat whose pieces are computed into its buffer (Box) holds it from the first piece on
    // (a piece that is a concat in turn: from its own first piece).
    std::vector<int32_t> first_write(g.nodes.size());
    for (uint32_t i = 0; i < g.nodes.size(); ++i) first_write[i] = static_cast<int32_t>(i);
    for (uint32_t i = 0; i < g.nodes.size(); ++i)
      for (const ValuePlan& vp : s.values[i])
        if (vp.storage == ValueStorage::Box) first_write[vp.root.node] = std::min(first_write[vp.root.node], first_write[i]);
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      for (ValuePlan& vp : s.values[i]) {
        if (vp.storage != ValueStorage::Arena && vp.twin_offset < 0) continue;
        const auto output = static_cast<uint32_t>(&vp - s.values[i].data());
        const int64_t bytes = static_bytes(g.nodes[i].outputs[output]);
        if (vp.storage == ValueStorage::Arena) {
          arena.add(bytes, first_write[i], std::max(vp.last_use, static_cast<int32_t>(i)), &vp.offset);
          if (bytes > s.largest_bytes) s.largest_node = s.node_id(i), s.largest_output = output, s.largest_bytes = bytes;
        }
        // The loop's second state buffer, alive while the loop runs.
        if (vp.twin_offset >= 0) arena.add(bytes, static_cast<int32_t>(i), static_cast<int32_t>(i), &vp.twin_offset);
      }
      int64_t scratch = 0;
      for (const auto& child : s.children[i]) {
        scratch = std::max(scratch, child->arena_bytes);
        if (child->largest_bytes > s.largest_bytes)
          s.largest_node = child->largest_node, s.largest_output = child->largest_output,
          s.largest_bytes = child->largest_bytes;
      }
      if (scratch > 0) arena.add(scratch, static_cast<int32_t>(i), static_cast<int32_t>(i), &s.scratch_offset[i]);
    }
    s.arena_bytes = arena.solve();
  }

  Program& prog_;
  int64_t loop_vars_ = 0;
};

void plan_results(Program& prog) {
  const Graph& g = *prog.graph;
  const ScopePlan& s = *prog.root;
  for (ValueId r : g.results) {
    ResultPlan rp;
    rp.type = g.type(r);
    rp.static_shape = rp.type.shape.is_fully_defined();
    const ValuePlan& vp = s.at(r);
    const ValueId root = s.buffer_of(r);
    const ValuePlan& rootp = s.at(root);
    if (vp.storage != ValueStorage::Reg) {
      if (rootp.storage == ValueStorage::Param) {
        rp.kind = ResultKind::FromParam;
        rp.index = static_cast<int32_t>(std::find(g.params.begin(), g.params.end(), root.node) - g.params.begin());
      } else if (rootp.storage == ValueStorage::Const) {
        rp.kind = ResultKind::FromConst;
        rp.index = s.node_id(root.node);
      } else if (rootp.storage == ValueStorage::Slot) {
        rp.kind = ResultKind::FromSlot;
        rp.index = rootp.slot;
      }
    }
    prog.results.push_back(rp);
  }
}

}  // namespace

namespace {

int64_t count_loop_nests(const ScopePlan& s) {
  int64_t n = 0;
  for (size_t i = 0; i < s.values.size(); ++i) {
    const Node& node = s.graph->nodes[i];
    for (size_t k = 0; k < s.values[i].size(); ++k) {
      const ValueStorage st = s.values[i][k].storage;
      const bool buffer = st == ValueStorage::Arena || st == ValueStorage::Owned || st == ValueStorage::Dest ||
                          st == ValueStorage::Box;
      if (buffer && node.op != OpKind::MatMul && !is_register_type(node.outputs[k])) ++n;
    }
    for (const auto& child : s.children[i]) n += count_loop_nests(*child);
  }
  return n;
}

}  // namespace

void for_each_loop_body(const ScopePlan& s, const std::function<void(const ScopePlan& body, int64_t loop_vars)>& f) {
  for (uint32_t i = 0; i < s.children.size(); ++i) {
    const Node& n = s.graph->nodes[i];
    if (n.op == OpKind::While && !n.attrs.per_element() && s.children[i].size() == 2) f(*s.children[i][1], n.attrs.loop_vars());
    for (const auto& child : s.children[i]) for_each_loop_body(*child, f);
  }
}

int64_t loop_capture(const Graph& body, ValueId v, int64_t loop_vars) {
  if (body.nodes[v.node].op != OpKind::Placeholder) return -1;
  const auto p = std::find(body.params.begin(), body.params.end(), v.node);
  if (p == body.params.end() || p - body.params.begin() < loop_vars) return -1;
  return p - body.params.begin();
}

void for_each_packed_operand(const ScopePlan& s, const std::function<void(const Graph& body, uint32_t node)>& f) {
  for_each_loop_body(s, [&](const ScopePlan& body, int64_t loop_vars) {
    for (const LoopInvariantOperand& op : loop_invariant_gemm_operands(*body.graph, loop_vars)) f(*body.graph, op.node);
  });
}

void apply_config(Program& program, const JitConfig& config) {
  program.config = config;
  program.rolled_loops = config.rolled(program.loop_nests);
  program.packed_operands = 0;
  if (config.pack_loop_weights) for_each_packed_operand(*program.root, [&](const Graph&, uint32_t) { ++program.packed_operands; });
  program.pulled_segments = 0;
  if (config.pull_segments) for_each_segment_pull(*program.root, [&](const Graph&, uint32_t) { ++program.pulled_segments; });
}

Program plan_program(std::shared_ptr<const Graph> graph) {
  Program prog;
  prog.graph = run_loops_per_element(compute_concats_by_segments(std::move(graph)));
  Planner planner(prog);
  std::vector<int32_t> param_slots;
  for (uint32_t p : prog.graph->params)
    param_slots.push_back(prog.graph->nodes[p].outputs[0].dtype == DType::List ? prog.num_slots++ : -1);
  prog.param_slots = param_slots;
  prog.root = planner.plan(*prog.graph, ScopeKind::Function, param_slots);
  plan_results(prog);
  prog.loop_nests = count_loop_nests(*prog.root);
  return prog;
}

}  // namespace ag::jit
