// If and While become real branches and loops. Loop state lives in registers (one-element
// values), in buffers of the parent's arena (static sizes: the body's results are copied in at the
// end of each iteration), in owned buffers (sizes known at run time) or in runtime slots
// (TensorArrays, moved rather than copied so writes stay in place).
#include "emitter.h"

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

void Emitter::lower_while(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const size_t nvars = static_cast<size_t>(n.attrs.loop_vars());
  const NodeInfo& info = program().nodes[s.node_id(i)];
  enum class Kind { Reg, Slot, Static, Dynamic };
  std::vector<Kind> kind(nvars);
  std::vector<LVal> state(nvars);
  std::vector<llvm::Value*> static_ptr(nvars, nullptr);

  // Entry: the initial values become the state.
  for (size_t k = 0; k < nvars; ++k) {
    const TensorType& t = n.outputs[k];
    const ValuePlan& vp = s.plan->values[i][k];
    const LVal& init = s.at(n.inputs[k]);
    state[k].dtype = t.dtype;
    if (t.dtype == DType::List) {
      kind[k] = Kind::Slot;
      state[k].kind = LVal::Kind::Slot;
      state[k].slot = vp.slot;
      b_.CreateCall(runtime("agc_rt_slot_copy"), {ctx_, i32(init.slot), i32(vp.slot), i32(info.consume >> k & 1)});
    } else if (vp.storage == ValueStorage::Reg) {
      kind[k] = Kind::Reg;
      state[k].kind = LVal::Kind::Reg;
      state[k].reg = as_register(init);
      state[k].dims = static_dims(t.shape);
    } else if (static_bytes(t) >= 0) {
      kind[k] = Kind::Static;
      state[k].kind = LVal::Kind::Buf;
      state[k].dims = static_dims(t.shape);
      static_ptr[k] = state[k].ptr = allocate_value(s, {i, static_cast<uint32_t>(k)}, state[k].dims);
      copy_value(init, state[k].ptr);
    } else {
      kind[k] = Kind::Dynamic;
      state[k].kind = LVal::Kind::Buf;
      state[k].dims = init.dims;
      state[k].ptr = owned_alloc(byte_size(t.dtype, init.dims), s.site({i, static_cast<uint32_t>(k)}, init.dims));
      copy_value(init, state[k].ptr);
    }
  }

  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_ref_, "while.cond", fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_ref_, "while.body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_ref_, "while.end", fn);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  // Phis for what changes between iterations: registers, owned pointers and their dynamic dims.
  std::vector<std::vector<llvm::PHINode*>> phis(nvars);
  auto make_phi = [&](size_t k, llvm::Value*& value) {
    llvm::PHINode* p = b_.CreatePHI(value->getType(), 2);
    p->addIncoming(value, pre);
    value = p;
    phis[k].push_back(p);
  };
  for (size_t k = 0; k < nvars; ++k) {
    if (kind[k] == Kind::Reg) make_phi(k, state[k].reg);
    if (kind[k] != Kind::Dynamic) continue;
    make_phi(k, state[k].ptr);
    for (size_t d = 0; d < state[k].dims.size(); ++d)
      if (n.outputs[k].shape[static_cast<int64_t>(d)] < 0) make_phi(k, state[k].dims[d]);
      else state[k].dims[d] = i64(n.outputs[k].shape[static_cast<int64_t>(d)]);
  }
  std::vector<LVal> params = state;
  for (size_t k = nvars; k < n.inputs.size(); ++k) params.push_back(s.at(n.inputs[k]));
  llvm::Value* arena = child_arena(s, i);

  Scope cond;
  cond.plan = s.plan->children[i][0].get();
  cond.arena = arena;
  lower_nodes(cond, params);
  llvm::Value* go = as_register(cond.at(cond.graph().results[0]));
  release_scope(cond);
  b_.CreateCondBr(go, body_bb, exit);

  b_.SetInsertPoint(body_bb);
  Scope body;
  body.plan = s.plan->children[i][1].get();
  body.arena = arena;
  lower_nodes(body, params);
  const Graph& bg = body.graph();
  // Results that alias the state (views of loop variables) are copied aside first, so writing
  // one state buffer cannot clobber another result.
  std::vector<LVal> next(nvars);
  std::vector<llvm::Value*> temps;
  for (size_t k = 0; k < nvars; ++k) {
    const ValueId r = bg.results[k];
    next[k] = body.at(r);
    if (kind[k] != Kind::Static || param_index(bg, r) == static_cast<int64_t>(k)) continue;
    const ValuePlan& vp = body.plan->at(r);
    const ValueId root = vp.storage == ValueStorage::View ? vp.root : r;
    const int64_t p = is_param(bg, root) ? param_index(bg, root) : -1;
    if (p < 0 || p >= static_cast<int64_t>(nvars) || next[k].kind != LVal::Kind::Buf) continue;
    llvm::Value* tmp = owned_alloc(byte_size(next[k].dtype, next[k].dims), body.site(r, next[k].dims));
    copy_value(next[k], tmp);
    next[k].ptr = tmp;
    temps.push_back(tmp);
  }
  std::vector<llvm::Value*> replaced;
  for (size_t k = 0; k < nvars; ++k) {
    const ValueId r = bg.results[k];
    const bool unchanged = param_index(bg, r) == static_cast<int64_t>(k);
    switch (kind[k]) {
      case Kind::Reg: next[k].reg = as_register(next[k]); break;
      case Kind::Slot:
        if (!unchanged)
          b_.CreateCall(runtime("agc_rt_slot_copy"), {ctx_, i32(next[k].slot), i32(state[k].slot), i32(movable_result(bg, k) ? 1 : 0)});
        break;
      case Kind::Static:
        if (!unchanged) copy_value(next[k], static_ptr[k]);
        break;
      case Kind::Dynamic:
        if (unchanged) {
          next[k] = state[k];
          break;
        }
        {
          llvm::Value* fresh = owned_alloc(byte_size(next[k].dtype, next[k].dims), body.site(r, next[k].dims));
          copy_value(next[k], fresh);
          next[k].ptr = fresh;
          replaced.push_back(state[k].ptr);
        }
        break;
    }
  }
  for (llvm::Value* p : temps) owned_free(p);
  for (llvm::Value* p : replaced) owned_free(p);
  release_scope(body);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  for (size_t k = 0; k < nvars; ++k) {
    size_t at = 0;
    auto incoming = [&](llvm::Value* v) { phis[k][at++]->addIncoming(v, latch); };
    if (kind[k] == Kind::Reg) incoming(next[k].reg);
    if (kind[k] != Kind::Dynamic) continue;
    incoming(next[k].ptr);
    for (size_t d = 0; d < state[k].dims.size(); ++d)
      if (n.outputs[k].shape[static_cast<int64_t>(d)] < 0) incoming(next[k].dims[d]);
  }
  b_.CreateBr(head);

  b_.SetInsertPoint(exit);
  for (size_t k = 0; k < nvars; ++k) {
    const ValuePlan& vp = s.plan->values[i][k];
    if (kind[k] != Kind::Dynamic || vp.storage != ValueStorage::Dest) continue;
    const Sink& sink = s.sinks.at(static_cast<size_t>(vp.dest));
    if (sink.kind == Sink::Kind::Owned) continue;  // the owned state itself goes to the parent
    llvm::Value* dst = allocate_value(s, {i, static_cast<uint32_t>(k)}, state[k].dims);
    copy_value(state[k], dst);
    owned_free(state[k].ptr);
    state[k].ptr = dst;
  }
  s.values[i] = state;
}

}  // namespace ag::jit
