// Lowering a scope: binding parameters, dispatching each node to its op family, freeing owned
// buffers after their last use, and delivering results to their sinks.
#include "../fusion.h"
#include "emitter.h"

namespace ag::jit {

namespace {

// Whether node i's lowering is work of its own, worth an event in a profile (JitConfig::profile):
// a loop nest, a product, a runtime call, a whole If or While; not a value computed inside
// another node's loop, a register, a view or a constant.
bool profiled_node(const Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  if (n.op == OpKind::Placeholder || n.op == OpKind::Const) return false;
  if (n.outputs.empty()) return true;
  const ValueStorage st = s.plan->values[i][0].storage;
  return st != ValueStorage::Fused && st != ValueStorage::Reg && st != ValueStorage::View;
}

}  // namespace

void Emitter::lower_nodes(Scope& s, const std::vector<LVal>& params) {
  const Graph& g = s.graph();
  const bool profiled = program().config.profile && s.plan->kind == ScopeKind::Function;
  s.values.assign(g.nodes.size(), {});
  for (size_t p = 0; p < g.params.size(); ++p) s.values[g.params[p]] = {params.at(p)};
  // node_lines: each node's instructions carry its global id; the If/While node that lowers
  // this scope gets its location back for the code after it (merging results).
  const llvm::DebugLoc outer = b_.getCurrentDebugLocation();
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op == OpKind::Placeholder) continue;
    at_node(s.node_id(i));
    // Compiled while a profile ran: the node's time goes to the profile (agc_rt_profile_node).
    llvm::Value* began = profiled && profiled_node(s, i) ? b_.CreateCall(runtime("agc_rt_clock"), {ctx()}) : nullptr;
    const int32_t event_node = s.node_id(i);
    auto report = [&] {
      if (began) b_.CreateCall(runtime("agc_rt_profile_node"), {ctx(), i32(event_node), began});
    };
    if (const int64_t chain = matmul_chain_length(s, i)) {
      lower_matmul_chain(s, i, chain);
      // Values that die inside the chain are freed after it (x and the products are not owned).
      for (uint32_t c = i; c < i + chain; ++c)
        for (ValueId v : s.plan->free_after[c]) release_value(s, v);
      i += static_cast<uint32_t>(chain) - 1;
      report();
      continue;
    }
    lower_node(s, i);
    report();
    for (ValueId v : s.plan->free_after[i]) release_value(s, v);
  }
  b_.SetCurrentDebugLocation(outer);
}

void Emitter::lower_node(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  // A TensorArray captured as a constant: the runtime puts its handle in the node's slot.
  if (n.op == OpKind::Const && n.outputs[0].dtype == DType::List) return lower_list(s, i);
  if (n.op == OpKind::Const) {
    const TensorType& t = n.outputs[0];
    LVal v;
    v.dtype = t.dtype;
    v.dims = static_dims(t.shape);
    if (s.plan->values[i][0].storage == ValueStorage::Reg) {
      v.kind = LVal::Kind::Reg;
      v.reg = constant(t.dtype, detail::element_as_double(n.attrs.value, 0), detail::element_as_int(n.attrs.value, 0));
    } else {
      v.kind = LVal::Kind::Buf;
      llvm::Value* consts = ctx_field(CtxField::Consts);
      v.ptr = b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(b_.getPtrTy(), consts, i64(s.node_id(i))));
    }
    s.values[i] = {v};
    return;
  }
  if (is_elementwise_expr(n.op)) return lower_elementwise(s, i);
  switch (op_class(n.op)) {
    case OpClass::Reduce: return lower_reduce(s, i);
    case OpClass::ArgReduce: return lower_arg_reduce(s, i);
    case OpClass::MatMul: return lower_matmul(s, i);
    case OpClass::Scan: return lower_scan(s, i);
    case OpClass::Window:
    case OpClass::Index: return compiled_scatter(s.graph(), n) ? lower_scatter(s, i) : lower_runtime_kernel(s, i);
    case OpClass::Source: return lower_source(s, i);
    case OpClass::Stateful: return lower_stateful(s, i);
    case OpClass::List: return lower_list(s, i);
    case OpClass::Control:
      if (n.op == OpKind::CustomGradient) throw InternalError("lowering: a custom_gradient node was not stripped");
      return n.op == OpKind::If ? lower_if(s, i) : lower_while(s, i);
    default: return lower_layout(s, i);  // Identity and the layout ops
  }
}

LVal Emitter::deliver_result(Scope& s, size_t k) {
  const ValueId r = s.graph().results[k];
  const LVal v = s.at(r);
  const Sink sink = k < s.sinks.size() ? s.sinks[k] : Sink{};
  const ValuePlan& vp = s.plan->at(r);
  const ValuePlan& root = vp.storage == ValueStorage::View ? s.plan->at(vp.root) : vp;
  if (sink.kind == Sink::Kind::None || (root.storage == ValueStorage::Dest && root.dest == static_cast<int32_t>(k))) return v;
  LVal out = v;
  out.kind = LVal::Kind::Buf;
  out.reg = nullptr;
  switch (sink.kind) {
    case Sink::Kind::Static: out.ptr = sink.ptr; break;
    case Sink::Kind::Owned: out.ptr = owned_alloc(byte_size(v.dtype, v.dims), s.site(r, v.dims)); break;
    case Sink::Kind::Output: out.ptr = output_buffer(sink.index, v.dims, s.site(r, v.dims)); break;
    case Sink::Kind::None: break;
  }
  copy_value(v, out.ptr);
  return out;
}

void Emitter::release_scope(Scope& s) {
  for (ValueId v : s.plan->free_at_end) release_value(s, v);
}

// An Owned buffer is freed; a Borrowed variable value's tensor is let go (plan.h).
void Emitter::release_value(Scope& s, ValueId v) {
  const ValuePlan& vp = s.plan->at(v);
  if (vp.storage == ValueStorage::Borrowed) b_.CreateCall(runtime("agc_rt_var_release"), {ctx(), i32(vp.slot)});
  else owned_free(s.at(v).ptr);
}

}  // namespace ag::jit
