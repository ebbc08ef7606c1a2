// If and While become real branches and loops. Loop state lives in registers (one-element
// values), in buffers of the parent's arena (static sizes: the body's results are copied in at the
// end of each iteration), in two such buffers used in turn (the body computes the next state into
// the one the current state is not in: plan_updates.h, twin), in owned buffers (sizes known at
// run time) or in runtime slots (TensorArrays, moved rather than copied so writes stay in place).
#include <algorithm>

#include "emitter.h"
#include "../matmul_forms.h"
#include "../segment_pulls.h"

namespace ag::jit {
namespace {

bool is_param(const Graph& g, ValueId v) { return g.nodes[v.node].op == OpKind::Placeholder; }

// The parameter index of a sub-graph placeholder, or -1.
int64_t param_index(const Graph& g, ValueId v) {
  for (size_t p = 0; p < g.params.size(); ++p)
    if (g.params[p] == v.node) return static_cast<int64_t>(p);
  return -1;
}

// A slot result may be moved out when it was made in this scope and is returned only once.
bool movable_result(const Graph& g, size_t k) {
  const ValueId r = g.results[k];
  if (is_param(g, r)) return false;
  for (size_t j = 0; j < g.results.size(); ++j)
    if (j != k && g.results[j] == r) return false;
  return true;
}

}  // namespace

llvm::Value* Emitter::child_arena(Scope& s, uint32_t i) {
  if (!s.arena) return nullptr;
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), s.arena, i64(s.plan->scratch_offset[i]));
}

void Emitter::lower_if(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  llvm::Value* cond = as_register(s.at(n.inputs[0]));
  std::vector<LVal> operands;
  for (size_t k = 1; k < n.inputs.size(); ++k) operands.push_back(s.at(n.inputs[k]));

  const size_t nout = n.outputs.size();
  std::vector<Sink> sinks(nout);
  std::vector<LVal> outs(nout);
  for (size_t k = 0; k < nout; ++k) {
    const ValuePlan& vp = s.plan->values[i][k];
    outs[k].dtype = n.outputs[k].dtype;
    switch (vp.storage) {
      case ValueStorage::Slot:
        outs[k].kind = LVal::Kind::Slot;
        outs[k].slot = vp.slot;
        break;
      case ValueStorage::Arena: sinks[k] = {Sink::Kind::Static, b_.CreateInBoundsGEP(b_.getInt8Ty(), s.arena, i64(vp.offset)), 0}; break;
      case ValueStorage::Dest: sinks[k] = s.sinks.at(static_cast<size_t>(vp.dest)); break;
      case ValueStorage::Owned: sinks[k].kind = Sink::Kind::Owned; break;
      default: break;  // Reg: a phi
    }
  }

  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* blocks[2] = {llvm::BasicBlock::Create(ctx_ref_, "if.then", fn),
                                 llvm::BasicBlock::Create(ctx_ref_, "if.else", fn)};
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_ref_, "if.end", fn);
  llvm::Value* arena = child_arena(s, i);
  b_.CreateCondBr(cond, blocks[0], blocks[1]);
  llvm::BasicBlock* ends[2];
  std::vector<LVal> results[2];
  for (int br = 0; br < 2; ++br) {
    b_.SetInsertPoint(blocks[br]);
    Scope child;
    child.plan = s.plan->children[i][static_cast<size_t>(br)].get();
    child.arena = arena;
    child.sinks = sinks;
    lower_nodes(child, operands);
    const Graph& g = child.graph();
    for (size_t k = 0; k < nout; ++k) {
      LVal r = deliver_result(child, k);
      if (outs[k].kind == LVal::Kind::Slot) {
        b_.CreateCall(runtime("agc_rt_slot_copy"), {ctx_, i32(r.slot), i32(outs[k].slot), i32(movable_result(g, k) ? 1 : 0)});
      } else if (s.plan->values[i][k].storage == ValueStorage::Reg) {
        r.reg = as_register(r);
        r.kind = LVal::Kind::Reg;
      }
      results[br].push_back(r);
    }
    release_scope(child);
    ends[br] = b_.GetInsertBlock();
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  auto phi = [&](llvm::Value* a, llvm::Value* c) -> llvm::Value* {
    if (a == c) return a;
    llvm::PHINode* p = b_.CreatePHI(a->getType(), 2);
    p->addIncoming(a, ends[0]);
    p->addIncoming(c, ends[1]);
    return p;
  };
  for (size_t k = 0; k < nout; ++k) {
    if (outs[k].kind == LVal::Kind::Slot) continue;
    const LVal& a = results[0][k];
    const LVal& c = results[1][k];
    const Shape& shape = n.outputs[k].shape;
    for (int64_t d = 0; d < shape.rank(); ++d)
      outs[k].dims.push_back(shape[d] >= 0 ? i64(shape[d]) : phi(a.dims[static_cast<size_t>(d)], c.dims[static_cast<size_t>(d)]));
    if (s.plan->values[i][k].storage == ValueStorage::Reg) {
      outs[k].kind = LVal::Kind::Reg;
      outs[k].reg = phi(a.reg, c.reg);
    } else {
      outs[k].kind = LVal::Kind::Buf;
      outs[k].ptr = phi(a.ptr, c.ptr);
    }
  }
  s.values[i] = outs;
}

namespace {

// A While as a loop: the state set up from the initial values, a header whose phis carry what
// changes between iterations, the condition, the body, the body's results written back into
// the state, and the final state delivered. One step per method, in that order.
class WhileLowering : NodeLowering {
 public:
  WhileLowering(Emitter& e, Scope& s, uint32_t i)
      : NodeLowering(e, s, i), nvars_(static_cast<size_t>(n_.attrs.loop_vars())), kind_(nvars_), state_(nvars_),
        static_ptr_(nvars_, nullptr), twin_ptr_(nvars_, nullptr), phis_(nvars_) {}

  void lower() {
    initial_state();
    pack_invariant_operands();
    order_segments();
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    head_ = llvm::BasicBlock::Create(e_.context(), "while.cond", fn);
    body_bb_ = llvm::BasicBlock::Create(e_.context(), "while.body", fn);
    exit_ = llvm::BasicBlock::Create(e_.context(), "while.end", fn);
    b_.CreateBr(head_);
    b_.SetInsertPoint(head_);
    open_phis(pre);
    if (std::find(kind_.begin(), kind_.end(), Kind::Twin) != kind_.end()) {
      second_iteration_on_ = b_.CreatePHI(b_.getInt1Ty(), 2, "while.again");
      second_iteration_on_->addIncoming(b_.getFalse(), pre);
    }
    std::vector<LVal> params = state_;
    for (size_t k = nvars_; k < n_.inputs.size(); ++k) params.push_back(s_.at(n_.inputs[k]));
    llvm::Value* arena = e_.child_arena(s_, i_);
    condition(params, arena);
    b_.SetInsertPoint(body_bb_);
    body(params, arena);
    if (second_iteration_on_) second_iteration_on_->addIncoming(b_.getTrue(), b_.GetInsertBlock());
    b_.CreateBr(head_);
    b_.SetInsertPoint(exit_);
    for (const auto& [node, packed] : packed_) e_.owned_free(packed);
    for (const Scope::SegmentOrder& o : segment_orders_) e_.owned_free(o.block);
    deliver_final_state();
    s_.values[i_] = state_;
  }

 private:
  // Where a loop variable lives between iterations.
  // Twin: a static state in one of two buffers (static_ptr_, twin_ptr_), the current one a phi.
  enum class Kind { Reg, Slot, Static, Twin, Dynamic };

  // Entry: the initial values become the state.
  void initial_state() {
    const NodeInfo& info = e_.program().nodes[s_.node_id(i_)];
    for (size_t k = 0; k < nvars_; ++k) {
      const TensorType& t = n_.outputs[k];
      const ValuePlan& vp = s_.plan->values[i_][k];
      const LVal& init = s_.at(n_.inputs[k]);
      LVal& st = state_[k];
      st.dtype = t.dtype;
      if (t.dtype == DType::List) {
        kind_[k] = Kind::Slot;
        st.kind = LVal::Kind::Slot;
        st.slot = vp.slot;
        b_.CreateCall(e_.runtime("agc_rt_slot_copy"),
                      {e_.ctx(), e_.i32(init.slot), e_.i32(vp.slot), e_.i32(info.consume >> k & 1)});
      } else if (vp.storage == ValueStorage::Reg) {
        kind_[k] = Kind::Reg;
        st.kind = LVal::Kind::Reg;
        st.reg = e_.as_register(init);
        st.dims = e_.static_dims(t.shape);
      } else if (static_bytes(t) >= 0) {
        kind_[k] = vp.twin_offset >= 0 ? Kind::Twin : Kind::Static;
        st.kind = LVal::Kind::Buf;
        st.dims = e_.static_dims(t.shape);
        static_ptr_[k] = st.ptr = e_.allocate_value(s_, {i_, static_cast<uint32_t>(k)}, st.dims);
        if (vp.twin_offset >= 0) twin_ptr_[k] = b_.CreateInBoundsGEP(b_.getInt8Ty(), s_.arena, e_.i64(vp.twin_offset));
        e_.copy_value(init, st.ptr);
      } else {
        kind_[k] = Kind::Dynamic;
        st.kind = LVal::Kind::Buf;
        st.dims = init.dims;
        st.ptr = e_.owned_alloc(e_.byte_size(t.dtype, init.dims), s_.site({i_, static_cast<uint32_t>(k)}, init.dims));
        e_.copy_value(init, st.ptr);
      }
    }
  }

  // Before the loop: the B operands of the body's products that stay the same through it, packed
  // once (matmul_forms.h); each iteration's product reads the panels (lower_matmul.cpp).
  void pack_invariant_operands() {
    if (!e_.program().config.pack_loop_weights) return;
    const Graph& body = *s_.plan->children[i_][1]->graph;
    for (const auto [j, param] : loop_invariant_gemm_operands(body, static_cast<int64_t>(nvars_))) {
      const Node& n = body.nodes[j];
      const Shape &a = body.type(n.inputs[0]).shape, &w = body.type(n.inputs[1]).shape;
      const bool ta = n.attrs.transpose_a(), tb = n.attrs.transpose_b();
      const LVal weight = e_.as_buffer(s_.at(n_.inputs[param]));
      llvm::Value* packed = b_.CreateCall(
          e_.runtime("agc_rt_gemm_pack_b"),
          {e_.ctx(), e_.i32(n.outputs[0].dtype == DType::Float64 ? 1 : 0), weight.ptr, e_.i64(a[ta ? 1 : 0]),
           e_.i64(a[ta ? 0 : 1]), e_.i64(w[tb ? 0 : 1]), e_.i64((ta ? 1 : 0) | (tb ? 2 : 0))});
      packed_.push_back({j, packed});
    }
  }

  // Before the loop: the edges of the body's segment sums whose ids stay the same through it,
  // ordered by segment once (segment_pulls.h); each iteration pulls (lower_scatter.cpp).
  void order_segments() {
    if (!e_.program().config.pull_segments) return;
    const ScopePlan& body = *s_.plan->children[i_][1];
    const Graph& g = *body.graph;
    for (const SegmentPull& pull : loop_invariant_segment_pulls(body, static_cast<int64_t>(nvars_))) {
      const Node& n = g.nodes[pull.node];
      const TensorType& ids = g.type(n.inputs[1]);
      const int64_t gathers = static_cast<int64_t>(pull.gathers.size());
      // Each fused gather's indices, and their dtype and the params' rows, in two stack arrays.
      llvm::Value* indices = gathers ? e_.stack_alloc(8 * gathers) : llvm::Constant::getNullValue(b_.getPtrTy());
      llvm::Value* info = gathers ? e_.stack_alloc(16 * gathers) : llvm::Constant::getNullValue(b_.getPtrTy());
      Scope::SegmentOrder order{pull.node, nullptr, {}, pull.reads_edges};
      for (int64_t k = 0; k < gathers; ++k) {
        const auto [gather, param] = pull.gathers[static_cast<size_t>(k)];
        const Node& gn = g.nodes[gather];
        b_.CreateStore(e_.as_buffer(s_.at(n_.inputs[param])).ptr, b_.CreateInBoundsGEP(b_.getPtrTy(), indices, e_.i64(k)));
        e_.store(DType::Int64, info, e_.i64(2 * k), e_.i64(g.type(gn.inputs[1]).dtype == DType::Int64 ? 1 : 0));
        e_.store(DType::Int64, info, e_.i64(2 * k + 1), e_.i64(g.type(gn.inputs[0]).shape[0]));
        order.gathers.push_back(gather);
      }
      order.block = b_.CreateCall(e_.runtime("agc_rt_segment_order"),
                                  {e_.ctx(), e_.as_buffer(s_.at(n_.inputs[pull.ids_param])).ptr,
                                   e_.i32(ids.dtype == DType::Int64 ? 1 : 0), e_.i64(ids.shape[0]), e_.i64(n.outputs[0].shape[0]),
                                   e_.i64(gathers), e_.i32(pull.reads_edges ? 1 : 0), indices, info});
      // No room for the order: the error names the segment sum (as the push's own buffer would).
      e_.return_if_out_of_memory(order.block, {body.node_id(pull.node), 0, nullptr, 0});
      segment_orders_.push_back(std::move(order));
    }
  }

  // Phis for what changes between iterations: registers, owned pointers and their dynamic dims.
  void open_phis(llvm::BasicBlock* pre) {
    auto make_phi = [&](size_t k, llvm::Value*& value) {
      llvm::PHINode* p = b_.CreatePHI(value->getType(), 2);
      p->addIncoming(value, pre);
      value = p;
      phis_[k].push_back(p);
    };
    for (size_t k = 0; k < nvars_; ++k) {
      if (kind_[k] == Kind::Reg) make_phi(k, state_[k].reg);
      if (kind_[k] == Kind::Twin) make_phi(k, state_[k].ptr);
      if (kind_[k] != Kind::Dynamic) continue;
      make_phi(k, state_[k].ptr);
      for (size_t d = 0; d < state_[k].dims.size(); ++d)
        if (n_.outputs[k].shape[static_cast<int64_t>(d)] < 0) make_phi(k, state_[k].dims[d]);
        else state_[k].dims[d] = e_.i64(n_.outputs[k].shape[static_cast<int64_t>(d)]);
    }
  }

  void condition(const std::vector<LVal>& params, llvm::Value* arena) {
    Scope cond;
    cond.plan = s_.plan->children[i_][0].get();
    cond.arena = arena;
    e_.lower_nodes(cond, params);
    llvm::Value* go = e_.as_register(cond.at(cond.graph().results[0]));
    e_.release_scope(cond);
    b_.CreateCondBr(go, body_bb_, exit_);
  }

  void body(const std::vector<LVal>& params, llvm::Value* arena) {
    Scope body;
    body.plan = s_.plan->children[i_][1].get();
    body.arena = arena;
    body.packed_b = packed_;
    body.segment_orders = segment_orders_;
    // A twin state's next value goes into the buffer the current one is not in.
    body.sinks.resize(nvars_);
    for (size_t k = 0; k < nvars_; ++k)
      if (kind_[k] == Kind::Twin)
        body.sinks[k] = {Sink::Kind::Static,
                         b_.CreateSelect(b_.CreateICmpEQ(state_[k].ptr, static_ptr_[k]), twin_ptr_[k], static_ptr_[k]), 0,
                         second_iteration_on_};
    e_.lower_nodes(body, params);
    std::vector<llvm::Value*> temps;
    std::vector<LVal> next = results_set_aside(body, temps);
    std::vector<llvm::Value*> replaced = write_back(body, next);
    for (llvm::Value* p : temps) e_.owned_free(p);
    for (llvm::Value* p : replaced) e_.owned_free(p);
    e_.release_scope(body);
    close_phis(next);
  }

  // The body's results; those that alias the state (views of loop variables) are copied aside
  // first (into `temps`), so writing one state buffer cannot clobber another result.
  std::vector<LVal> results_set_aside(Scope& body, std::vector<llvm::Value*>& temps) {
    const Graph& bg = body.graph();
    std::vector<LVal> next(nvars_);
    for (size_t k = 0; k < nvars_; ++k) {
      const ValueId r = bg.results[k];
      next[k] = body.at(r);
      if ((kind_[k] != Kind::Static && kind_[k] != Kind::Twin) || param_index(bg, r) == static_cast<int64_t>(k)) continue;
      const ValueId root = body.plan->buffer_of(r);
      const int64_t p = is_param(bg, root) ? param_index(bg, root) : -1;
      // (p == k: the result is the state buffer itself, updated in place or seen another way.)
      if (p < 0 || p == static_cast<int64_t>(k) || p >= static_cast<int64_t>(nvars_) || next[k].kind != LVal::Kind::Buf)
        continue;
      llvm::Value* tmp = e_.owned_alloc(e_.byte_size(next[k].dtype, next[k].dims), body.site(r, next[k].dims));
      e_.copy_value(next[k], tmp);
      next[k].ptr = tmp;
      temps.push_back(tmp);
    }
    return next;
  }

  // The next iteration's state from the body's results: registers as they are, slots and static
  // buffers copied into place, dynamic ones into fresh owned buffers (the old ones returned, to
  // be freed).
  std::vector<llvm::Value*> write_back(Scope& body, std::vector<LVal>& next) {
    const Graph& bg = body.graph();
    std::vector<llvm::Value*> replaced;
    for (size_t k = 0; k < nvars_; ++k) {
      const ValueId r = bg.results[k];
      // The result is the state's own buffer: the parameter itself, or a value written into it
      // in place (an update of the loop variable: plan.cpp, update_in_place). A dynamic state
      // keeps its dims only when the update's input is the parameter itself (not a reshape).
      const bool same_buffer = next[k].kind == LVal::Kind::Buf && next[k].ptr == state_[k].ptr;
      const Node& producer = bg.nodes[r.node];
      const bool unchanged =
          param_index(bg, r) == static_cast<int64_t>(k) || ((kind_[k] == Kind::Static || kind_[k] == Kind::Twin) && same_buffer) ||
          (kind_[k] == Kind::Dynamic && same_buffer && producer.op == OpKind::SliceUpdate &&
           param_index(bg, producer.inputs[0]) == static_cast<int64_t>(k));
      switch (kind_[k]) {
        case Kind::Reg: next[k].reg = e_.as_register(next[k]); break;
        case Kind::Slot:
          if (!unchanged)
            b_.CreateCall(e_.runtime("agc_rt_slot_copy"), {e_.ctx(), e_.i32(next[k].slot), e_.i32(state_[k].slot),
                                                           e_.i32(movable_result(bg, k) ? 1 : 0)});
          break;
        case Kind::Static:
          if (!unchanged) e_.copy_value(next[k], static_ptr_[k]);
          break;
        case Kind::Twin:
          if (unchanged) {
            next[k].ptr = state_[k].ptr;
            break;
          }
          // Computed into the sink as planned; a result that is not (a view) is copied there.
          if (next[k].kind != LVal::Kind::Buf || next[k].ptr != body.sinks[k].ptr) e_.copy_value(next[k], body.sinks[k].ptr);
          next[k].kind = LVal::Kind::Buf;
          next[k].ptr = body.sinks[k].ptr;
          break;
        case Kind::Dynamic:
          if (unchanged) {
            next[k] = state_[k];
            break;
          }
          {
            llvm::Value* fresh = e_.owned_alloc(e_.byte_size(next[k].dtype, next[k].dims), body.site(r, next[k].dims));
            e_.copy_value(next[k], fresh);
            next[k].ptr = fresh;
            replaced.push_back(state_[k].ptr);
          }
          break;
      }
    }
    return replaced;
  }

  // The back edge's incoming values, in the order open_phis made the phis.
  void close_phis(const std::vector<LVal>& next) {
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    for (size_t k = 0; k < nvars_; ++k) {
      size_t at = 0;
      auto incoming = [&](llvm::Value* v) { phis_[k][at++]->addIncoming(v, latch); };
      if (kind_[k] == Kind::Reg) incoming(next[k].reg);
      if (kind_[k] == Kind::Twin) incoming(next[k].ptr);
      if (kind_[k] != Kind::Dynamic) continue;
      incoming(next[k].ptr);
      for (size_t d = 0; d < state_[k].dims.size(); ++d)
        if (n_.outputs[k].shape[static_cast<int64_t>(d)] < 0) incoming(next[k].dims[d]);
    }
  }

  // After the loop: a dynamic state bound for a planned destination is copied there (an owned
  // destination takes the state's own buffer).
  void deliver_final_state() {
    for (size_t k = 0; k < nvars_; ++k) {
      if (kind_[k] == Kind::Twin) {  // the state ends in its planned buffer
        LVal last = state_[k];
        e_.if_else(b_.CreateICmpNE(last.ptr, static_ptr_[k]), [&] { e_.copy_value(last, static_ptr_[k]); }, [] {});
        state_[k].ptr = static_ptr_[k];
        continue;
      }
      const ValuePlan& vp = s_.plan->values[i_][k];
      if (kind_[k] != Kind::Dynamic || vp.storage != ValueStorage::Dest) continue;
      const Sink& sink = s_.sinks.at(static_cast<size_t>(vp.dest));
      if (sink.kind == Sink::Kind::Owned) continue;  // the owned state itself goes to the parent
      llvm::Value* dst = e_.allocate_value(s_, {i_, static_cast<uint32_t>(k)}, state_[k].dims);
      e_.copy_value(state_[k], dst);
      e_.owned_free(state_[k].ptr);
      state_[k].ptr = dst;
    }
  }

  const size_t nvars_;
  std::vector<Kind> kind_;
  std::vector<LVal> state_;
  std::vector<llvm::Value*> static_ptr_;
  std::vector<llvm::Value*> twin_ptr_;
  std::vector<std::vector<llvm::PHINode*>> phis_;
  // With a twin state: false on the first iteration, true after (Sink::outside_kept). The state
  // starts in its planned buffer, so the first iteration writes the other one, the second the
  // planned one, which holds the initial value: from then on both hold the elements an update of
  // the state into its box leaves.
  llvm::PHINode* second_iteration_on_ = nullptr;
  std::vector<std::pair<uint32_t, llvm::Value*>> packed_;  // body node, its packed B (or null)
  std::vector<Scope::SegmentOrder> segment_orders_;         // the body's pulled segment sums
  llvm::BasicBlock* head_ = nullptr;
  llvm::BasicBlock* body_bb_ = nullptr;
  llvm::BasicBlock* exit_ = nullptr;
};

}  // namespace

void Emitter::lower_while(Scope& s, uint32_t i) {
  if (s.graph().nodes[i].attrs.per_element()) return lower_per_element_while(s, i);
  WhileLowering(*this, s, i).lower();
}

}  // namespace ag::jit
