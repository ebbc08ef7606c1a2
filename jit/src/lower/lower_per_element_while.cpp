// A While run element by element (per_element_loops.h): one loop nest over the elements of its
// loop variables, in which each element runs the loop on its own in registers until its own
// condition fails, then stores its final state.
//
// Lanes: where every op has a vector form and the elements' inner dim is read contiguously or
// broadcast, a block of consecutive elements (a vector register of 32-bit lanes) runs the loop
// together until none of them is active. That is the global loop restricted to the block, so it
// is exact for the same reason (an inactive element is a fixed point of the body); a lane that
// is done idles while the others finish. The last, partial block of a row runs element by
// element. Its cond and body are evaluated here, node by node, on scalars or on vectors.
//
// The nest writes nothing but the results, so the pool splits it (LoopWork::Loops), unless a
// counter is read after the loop: those are the counters of the longest run (the global loop's
// count), kept in stack slots, and the nest stays serial.
#include "emitter.h"

namespace ag::jit {
namespace {

bool half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

class PerElementWhileLowering : NodeLowering {
 public:
  PerElementWhileLowering(Emitter& e, Scope& s, uint32_t i)
      : NodeLowering(e, s, i), nvars_(static_cast<size_t>(n_.attrs.loop_vars())), results_(nvars_) {}

  void lower() {
    const std::vector<llvm::Value*> dims = e_.static_dims(element_shape());
    std::vector<const LVal*> leaves;
    for (ValueId v : n_.inputs)
      if (!is_register_type(s_.type(v))) e_.collect_leaves(s_, v, leaves);
    std::vector<llvm::Value*> outs;
    for (size_t k = 0; k < nvars_; ++k) {
      LVal& r = results_[k];
      r.dtype = n_.outputs[k].dtype;
      if (!element_var(k)) continue;
      r.kind = LVal::Kind::Buf;
      r.dims = dims;
      r.ptr = e_.allocate_value(s_, {i_, static_cast<uint32_t>(k)}, dims);
      outs.push_back(r.ptr);
      leaves.push_back(&r);
    }
    const Walk w = e_.make_walk(dims, leaves, /*collapse=*/true);
    keep_longest_counters();
    const unsigned lanes = block_lanes(w);
    if (lanes > 1) {
      const int64_t inner = llvm::cast<llvm::ConstantInt>(w.dims.back())->getSExtValue();
      std::vector<llvm::Value*> nest(w.dims.begin(), w.dims.end() - 1);
      nest.push_back(e_.i64((inner + lanes - 1) / lanes));
      e_.parallel_loop_nest(nest, outs, [&](const std::vector<llvm::Value*>& idx) { block(w, idx, inner, lanes); },
                            e_.i64(lanes), Codegen::LoopWork::Loops);
    } else {
      e_.parallel_loop_nest(w.dims, outs, [&](const std::vector<llvm::Value*>& idx) { element(w, idx); }, nullptr,
                            Codegen::LoopWork::Loops);
    }
    for (size_t k = 0; k < nvars_; ++k) {
      if (element_var(k)) continue;
      results_[k].kind = LVal::Kind::Reg;
      results_[k].reg = counter_slots_.empty() ? e_.as_register(s_.at(n_.inputs[k]))
                                               : e_.load(results_[k].dtype, counter_slots_[k], e_.i64(0));
    }
    s_.values[i_] = results_;
  }

 private:
  // A run of the loop: the state at its end and the iterations it ran.
  struct Run {
    std::vector<llvm::Value*> state;
    llvm::Value* trips = nullptr;
  };

  bool element_var(size_t k) const { return n_.outputs[k].shape.rank() != 0; }
  const Shape& element_shape() const {
    for (size_t k = 0; k < nvars_; ++k)
      if (element_var(k)) return n_.outputs[k].shape;
    throw InternalError("jit: a While run element by element without an element variable");
  }
  const ScopePlan& cond() const { return *s_.plan->children[i_][0]; }
  const ScopePlan& body() const { return *s_.plan->children[i_][1]; }

  // Lanes of a block: those of a 32-bit type in the target's vector register, when the inner dim
  // has that many, every buffer reads it contiguously or broadcasts it, and every op of the
  // cond and body has a vector form; else 1 (also under AG_JIT_VECTOR_LOOPS=0).
  unsigned block_lanes(const Walk& w) const {
    if (!e_.program().config.vector_loops) return 1;  // AG_JIT_VECTOR_LOOPS=0: every loop scalar
    const auto lanes = static_cast<unsigned>(e_.vector_width() / 4);
    const auto* inner = llvm::dyn_cast<llvm::ConstantInt>(w.dims.back());
    if (lanes < 2 || !inner || inner->getSExtValue() < lanes) return 1;
    for (ValueId v : n_.inputs) {
      const LVal& lv = s_.at(v);
      if (half(lv.dtype) || (lv.kind != LVal::Kind::Buf && !is_register_type(s_.type(v)))) return 1;
    }
    for (const auto& [leaf, strides] : w.strides)
      if (!e_.is_const(strides.back(), 0) && !e_.is_const(strides.back(), 1)) return 1;
    for (const ScopePlan* sub : {&cond(), &body()})
      for (const Node& n : sub->graph->nodes) {
        const DType out = n.outputs.empty() ? DType::Float32 : n.outputs[0].dtype;
        const DType in = n.inputs.empty() ? out : sub->graph->type(n.inputs.back()).dtype;
        if (half(in) || half(out)) return 1;
        const bool evaluated_here = n.op == OpKind::Placeholder || n.op == OpKind::Const || n.op == OpKind::FillLike ||
                                    n.op == OpKind::Identity || n.op == OpKind::StopGradient || n.op == OpKind::Cast;
        if (!evaluated_here && !e_.vector_op(n.op, in)) return 1;
      }
    return lanes;
  }

  // Counters read after the loop: slots for the longest run's count and counters, starting from
  // the initial values (the loop may run no iteration for any element).
  void keep_longest_counters() {
    bool read_after = false;
    for (size_t k = 0; k < nvars_; ++k) read_after |= !element_var(k) && s_.plan->values[i_][k].last_use >= 0;
    if (!read_after) return;
    counter_slots_.assign(nvars_, nullptr);
    for (size_t k = 0; k < nvars_; ++k) {
      if (element_var(k)) continue;
      counter_slots_[k] = e_.stack_alloc(8);
      e_.store(results_[k].dtype, counter_slots_[k], e_.i64(0), e_.as_register(s_.at(n_.inputs[k])));
    }
    longest_slot_ = e_.stack_alloc(8);
    e_.store(DType::Int64, longest_slot_, e_.i64(0), e_.i64(0));
  }

  // Element idx on its own: its loop, then its final state.
  void element(const Walk& w, const std::vector<llvm::Value*>& idx) {
    std::vector<llvm::Value*> params;
    for (ValueId v : n_.inputs)
      params.push_back(is_register_type(s_.type(v)) ? e_.as_register(s_.at(v)) : e_.eval_element(s_, v, w, idx));
    const Run run = loop(params, 1);
    for (size_t k = 0; k < nvars_; ++k)
      if (element_var(k))
        e_.store(results_[k].dtype, results_[k].ptr, e_.linear_offset(*w.find(&results_[k]), idx), run.state[k]);
    keep_if_longest(run, [](llvm::Value* v) { return v; });
  }

  // Block idx.back() of the row at the outer dims idx: a whole block of lanes, or the partial
  // last one element by element.
  void block(const Walk& w, const std::vector<llvm::Value*>& idx, int64_t inner, unsigned lanes) {
    const std::vector<llvm::Value*> outer(idx.begin(), idx.end() - 1);
    llvm::Value* base = b_.CreateMul(idx.back(), e_.i64(lanes));
    auto whole = [&] { lanes_block(w, outer, base, lanes); };
    if (inner % lanes == 0) return whole();
    e_.if_else(b_.CreateICmpSLE(b_.CreateAdd(base, e_.i64(lanes)), e_.i64(inner)), whole, [&] {
      e_.loop(b_.CreateSub(e_.i64(inner), base), [&](llvm::Value* j) {
        std::vector<llvm::Value*> at = outer;
        at.push_back(b_.CreateAdd(base, j));
        element(w, at);
      });
    });
  }

  void lanes_block(const Walk& w, const std::vector<llvm::Value*>& outer, llvm::Value* base, unsigned lanes) {
    std::vector<llvm::Value*> params;
    std::vector<std::pair<const LVal*, llvm::Value*>> loaded;
    for (ValueId v : n_.inputs) {
      const LVal& lv = s_.at(v);
      if (is_register_type(s_.type(v))) {
        params.push_back(b_.CreateVectorSplat(lanes, e_.as_register(lv)));
        continue;
      }
      llvm::Value* x = e_.eval_vector(s_, v, w, outer, base, lanes, nullptr, loaded);
      if (lv.dtype == DType::Bool) x = b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));  // bytes in memory
      params.push_back(x);
    }
    const Run run = loop(params, lanes);
    for (size_t k = 0; k < nvars_; ++k) {
      if (!element_var(k)) continue;
      const LVal& r = results_[k];
      const std::vector<llvm::Value*>& strides = *w.find(&r);  // row-major: the inner stride is 1
      llvm::Value* first = b_.CreateAdd(e_.linear_offset(std::vector<llvm::Value*>(strides.begin(), strides.end() - 1), outer), base);
      llvm::Value* x = run.state[k];
      if (r.dtype == DType::Bool) x = b_.CreateZExt(x, llvm::FixedVectorType::get(e_.mem_type(DType::Bool), lanes));
      b_.CreateAlignedStore(x, b_.CreateInBoundsGEP(e_.mem_type(r.dtype), r.ptr, first), llvm::Align(dtype_size(r.dtype)));
    }
    // A block's counters are the same in every lane.
    keep_if_longest(run, [&](llvm::Value* v) { return b_.CreateExtractElement(v, uint64_t{0}); });
  }

  // The loop on `params` (scalars, or vectors of `lanes` elements): while any element's cond
  // holds, the body.
  Run loop(std::vector<llvm::Value*> params, unsigned lanes) {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(e_.context(), "element.while.cond", fn);
    llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(e_.context(), "element.while.body", fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(e_.context(), "element.while.end", fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    Run run;
    std::vector<llvm::PHINode*> phis(nvars_);
    for (size_t k = 0; k < nvars_; ++k) {
      phis[k] = b_.CreatePHI(params[k]->getType(), 2);
      phis[k]->addIncoming(params[k], pre);
      params[k] = phis[k];
      run.state.push_back(phis[k]);
    }
    llvm::PHINode* trips = b_.CreatePHI(b_.getInt64Ty(), 2);
    trips->addIncoming(e_.i64(0), pre);
    run.trips = trips;
    llvm::Value* go = evaluate(cond(), params, lanes)[0];
    if (lanes > 1) go = b_.CreateOrReduce(go);
    b_.CreateCondBr(go, body_bb, exit);
    b_.SetInsertPoint(body_bb);
    const std::vector<llvm::Value*> next = evaluate(body(), params, lanes);
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    for (size_t k = 0; k < nvars_; ++k) phis[k]->addIncoming(next[k], latch);
    trips->addIncoming(b_.CreateAdd(trips, e_.i64(1)), latch);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    return run;
  }

  // The results of a scalar sub-graph on `params`, node by node (every value a register, or a
  // vector of `lanes` of them).
  std::vector<llvm::Value*> evaluate(const ScopePlan& sub, const std::vector<llvm::Value*>& params, unsigned lanes) {
    const Graph& g = *sub.graph;
    std::vector<llvm::Value*> v(g.nodes.size(), nullptr);
    for (size_t p = 0; p < g.params.size(); ++p) v[g.params[p]] = params[p];
    auto lanes_of = [&](llvm::Value* x) { return lanes > 1 ? b_.CreateVectorSplat(lanes, x) : x; };
    for (uint32_t j = 0; j < g.nodes.size(); ++j) {
      const Node& n = g.nodes[j];
      const DType out = n.outputs[0].dtype;
      switch (n.op) {
        case OpKind::Placeholder: break;
        case OpKind::Const:
          v[j] = lanes_of(e_.constant(out, detail::element_as_double(n.attrs.value, 0), detail::element_as_int(n.attrs.value, 0)));
          break;
        case OpKind::FillLike: v[j] = lanes_of(e_.constant(out, n.attrs.scalar, static_cast<int64_t>(n.attrs.scalar))); break;
        case OpKind::Identity:
        case OpKind::StopGradient: v[j] = v[n.inputs[0].node]; break;
        default: {
          std::vector<llvm::Value*> args;
          for (ValueId in : n.inputs) args.push_back(v[in.node]);
          const DType in = n.inputs.empty() ? out : g.type(n.inputs.back()).dtype;
          v[j] = e_.scalar_op(n, sub.node_id(j), in, args);
        }
      }
    }
    std::vector<llvm::Value*> results;
    for (ValueId r : g.results) results.push_back(v[r.node]);
    return results;
  }

  // After a run: its counters, when it is the longest so far and counters are read after the loop.
  void keep_if_longest(const Run& run, const std::function<llvm::Value*(llvm::Value*)>& scalar) {
    if (counter_slots_.empty()) return;
    e_.if_then(b_.CreateICmpSGT(run.trips, e_.load(DType::Int64, longest_slot_, e_.i64(0))), [&] {
      e_.store(DType::Int64, longest_slot_, e_.i64(0), run.trips);
      for (size_t k = 0; k < nvars_; ++k)
        if (!element_var(k)) e_.store(results_[k].dtype, counter_slots_[k], e_.i64(0), scalar(run.state[k]));
    });
  }

  const size_t nvars_;
  std::vector<LVal> results_;
  std::vector<llvm::Value*> counter_slots_;  // [k]: counter k of the longest run (empty: none is read)
  llvm::Value* longest_slot_ = nullptr;
};

}  // namespace

void Emitter::lower_per_element_while(Scope& s, uint32_t i) { PerElementWhileLowering(*this, s, i).lower(); }

}  // namespace ag::jit
