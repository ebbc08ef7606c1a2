// CompiledExecutable: the call protocol of compiled code (compiled_executable.h). No LLVM.
#include "compiled_executable.h"

#include <memory>

#include "ag/detail/ops_internal.h"
#include "ag/detail/out_of_memory.h"
#include "ag/detail/parked_tensor.h"
#include "plan_dump.h"

namespace ag::jit {
namespace {

// A view of `t`'s buffer with other dims (results that alias a parameter, constant or slot).
Tensor with_dims(const Tensor& t, const int64_t* dims, int64_t rank) {
  const Shape shape(std::span<const int64_t>(dims, static_cast<size_t>(rank)));
  if (t.dtype() == DType::List || t.shape() == shape) return t;
  detail::TensorImpl* impl = detail::impl_of(t);
  const size_t offset = static_cast<size_t>(static_cast<char*>(impl->data) - static_cast<char*>(impl->storage->data));
  return detail::make_view(impl->storage, offset, t.dtype(), shape);
}

// Result k of static shape, allocated before the call: the thread's parked tensor when it fits
// (inline: a loop of cached calls takes back the output its previous call's result left), else
// a new one. Out of memory names the op that computes it; the results allocated so far are
// dropped. Inlined into the cached call's path (its out-of-memory handler costs nothing until
// it runs).
[[gnu::always_inline]] inline Tensor allocate_result(const Program& p, std::span<Tensor> outputs, size_t k) {
  const ResultPlan& r = p.results[k];
  if (detail::TensorImpl* parked = detail::unpark(r.type.dtype, r.type.shape)) [[likely]]
    return detail::adopt(parked);
  try {
    return detail::make_tensor(r.type.dtype, r.type.shape);
  } catch (const detail::TensorAllocationFailure& f) {
    for (Tensor& t : outputs) t = Tensor();
    const Node& n = p.graph->nodes[p.graph->results[k].node];
    throw detail::out_of_memory(detail::user_op_name(n.op), f.dtype, f.shape, n.loc);
  }
}

}  // namespace

CompiledExecutable::CompiledExecutable(std::shared_ptr<const Graph> graph, const JitConfig& config)
    : program_(plan_program(std::move(graph))) {
  apply_config(program_, config);
  consts_.assign(program_.nodes.size(), nullptr);
  for (size_t id = 0; id < program_.nodes.size(); ++id) {
    const Node* n = program_.nodes[id].node;
    if (n && n->op == OpKind::Const && n->attrs.value.has_value() && n->attrs.value.dtype() != DType::List)
      consts_[id] = detail::impl_of(n->attrs.value)->data;
    // Variable ops: their VariableState, which the native lowering passes to its helpers.
    if (n && op_class(n->op) == OpClass::Stateful && n->attrs.variable) consts_[id] = n->attrs.variable.get();
  }
  for (int32_t slot : program_.param_slots) has_param_slots_ |= slot >= 0;
  for (const ResultPlan& r : program_.results) needs_fixup_ |= !(r.kind == ResultKind::Computed && r.static_shape);
  simple_ = !needs_fixup_ && !has_param_slots_ && program_.num_slots == 0 &&
            program_.graph->params.size() <= kInline && program_.results.size() <= kInline;
  num_results_ = program_.results.size();
  if (simple_) {
    // The counts of most cached calls: one to three tensors in, one or two out.
    const size_t nin = program_.graph->params.size();
    static constexpr Fn kOneResult[] = {nullptr, &run_fixed<1, 1>, &run_fixed<2, 1>, &run_fixed<3, 1>};
    static constexpr Fn kTwoResults[] = {nullptr, &run_fixed<1, 2>, &run_fixed<2, 2>};
    static_assert(std::size(kOneResult) - 1 <= detail::kMaxStubArgs);
    if (num_results_ == 1 && nin < std::size(kOneResult)) fn_ = kOneResult[nin];
    if (num_results_ == 2 && nin < std::size(kTwoResults)) fn_ = kTwoResults[nin];
  }
}

void CompiledExecutable::set_code(std::shared_ptr<const void> code, EntryFn entry, bool from_disk, bool uses_call_state) {
  code_ = std::move(code);
  entry_ = entry;
  from_disk_ = from_disk;
  uses_call_state_ = uses_call_state;
  // The direct call: a stub's counts with one result, and code that cannot reach a CallState.
  if (fn_ && num_results_ == 1 && !uses_call_state)
    enable_direct_call(entry, consts_.data(), program_.results[0].type.dtype, program_.results[0].type.shape);
  else
    disable_direct_call();
}

// The common case, kept lean for the cached-call path (simple_: few inputs and results, no
// slots, every result computed into a buffer allocated here). `input(p)`: input p's tensor.
// NIN and NOUT are the counts when they are known at compile time (the stubs: no loops, no
// counts loaded; a third of the cached call's instructions had been the generic loops and
// their set-up, docs/performance.md "W4: the cached-call path"), else 0 and `nin` and
// num_results_ give them. Each result is constructed in its slot: the slots come empty from a
// Function's call, so there is no previous value to release (a move assignment's self and
// release checks were taken branches on the path every cached call fetches).
template <size_t NIN, size_t NOUT, class Input>
[[gnu::always_inline]] inline void CompiledExecutable::run_simple(const Input& input, size_t nin, Tensor* outputs) const {
  JitArg args[NIN ? NIN : kInline];
  void* out_data[NOUT ? NOUT : kInline];
  int64_t out_dims[(NOUT ? NOUT : kInline) * kMaxRank];
  if constexpr (NIN != 0) nin = NIN;
  const size_t nout = NOUT ? NOUT : num_results_;
  for (size_t p = 0; p < nin; ++p) {
    const detail::TensorImpl* impl = input(p);
    args[p] = {impl->data, impl->shape.data()};
  }
  const std::span<Tensor> outs(outputs, nout);
  for (size_t k = 0; k < nout; ++k) {
    Tensor& slot = outputs[k];
    if (detail::impl_of(slot)) [[unlikely]]
      slot = Tensor();
    std::construct_at(&slot, allocate_result(program_, outs, k));
    out_data[k] = detail::impl_of(slot)->data;
  }
  CallState st;
  st.program = &program_;
  st.outputs = outs;
  JitCallCtx ctx{out_data, out_dims, consts_.data(), &st};
  if (enter(entry_, args, &ctx) != 0) [[unlikely]]
    fail(st, outs);
  if (st.owns_buffers()) [[unlikely]]
    st.release_owned();  // defensive: the code frees what it allocates
}

template <size_t NIN, size_t NOUT>
void CompiledExecutable::run_fixed(const detail::CallStub& self, const Tensor* const* args, Tensor* outputs) {
  static_cast<const CompiledExecutable&>(self).run_simple<NIN, NOUT>([&](size_t p) { return detail::impl_of(*args[p]); },
                                                                     NIN, outputs);
}

void CompiledExecutable::run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
  if (simple_) [[likely]]
    run_simple<0, 0>([&](size_t p) { return detail::impl_of(inputs[p]); }, inputs.size(), outputs.data());
  else
    run_general(inputs, outputs);
}

void CompiledExecutable::run_tensor_args(std::span<const detail::ArgView> args, std::span<Tensor> outputs) const {
  if (fn_) [[likely]]
    return detail::call_stub(*this, args, outputs.data());
  if (simple_) [[likely]]
    run_simple<0, 0>([&](size_t p) { return detail::impl_of(args[p].tensor()); }, args.size(), outputs.data());
  else
    Executable::run_tensor_args(args, outputs);
}

std::string CompiledExecutable::plan_text() const { return plan_graph_text(program_); }

// The root scope's arena holds its sub-graphs' arenas (at scratch offsets); values sized at run
// time are Owned, allocated apart: counted, in every scope.
std::pair<int64_t, int64_t> CompiledExecutable::temporaries() const {
  int64_t owned = 0;
  auto count = [&](auto& self, const ScopePlan& s) -> void {
    for (const auto& outputs : s.values)
      for (const ValuePlan& v : outputs) owned += v.storage == ValueStorage::Owned;
    for (const auto& subs : s.children)
      for (const auto& child : subs) self(self, *child);
  };
  count(count, *program_.root);
  return {program_.root->arena_bytes, owned};
}
std::string CompiledExecutable::plan_dot() const { return plan_graph_dot(program_); }

// A call the code failed: what it owned is released, the results dropped, its error rethrown.
[[noreturn]] void CompiledExecutable::fail(CallState& st, std::span<Tensor> outputs) {
  st.release_owned();
  for (Tensor& t : outputs) t = Tensor();
  if (st.error) std::rethrow_exception(st.error);
  throw InternalError("jit: compiled code failed without an error");
}

void CompiledExecutable::run_general(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
  const size_t nin = inputs.size(), nout = program_.results.size();
  JitArg inline_args[kInline];
  void* inline_out[kInline];
  int64_t inline_dims[kInline * kMaxRank];
  std::vector<JitArg> heap_args;
  std::vector<void*> heap_out;
  std::vector<int64_t> heap_dims;
  JitArg* args = inline_args;
  void** out_data = inline_out;
  int64_t* out_dims = inline_dims;
  if (nin > kInline) args = (heap_args.resize(nin), heap_args.data());
  if (nout > kInline) {
    out_data = (heap_out.resize(nout), heap_out.data());
    out_dims = (heap_dims.resize(nout * kMaxRank), heap_dims.data());
  }
  for (size_t p = 0; p < nin; ++p) {
    detail::TensorImpl* impl = detail::impl_of(inputs[p]);
    args[p] = {impl->data, impl->shape.data()};
  }
  CallState st;
  st.program = &program_;
  st.outputs = outputs;
  if (program_.num_slots) st.slots().resize(static_cast<size_t>(program_.num_slots));
  if (has_param_slots_)
    for (size_t p = 0; p < nin; ++p)
      if (program_.param_slots[p] >= 0) st.slots()[static_cast<size_t>(program_.param_slots[p])] = inputs[p];
  for (size_t k = 0; k < nout; ++k) {
    const ResultPlan& r = program_.results[k];
    out_data[k] = nullptr;
    if (r.kind == ResultKind::Computed && r.static_shape) {
      outputs[k] = allocate_result(program_, outputs, k);
      out_data[k] = detail::impl_of(outputs[k])->data;
    }
  }
  JitCallCtx ctx{out_data, out_dims, consts_.data(), &st};
  if (enter(entry_, args, &ctx) != 0) fail(st, outputs);
  if (st.owns_buffers()) [[unlikely]]
    st.release_owned();  // defensive: the code frees what it allocates
  if (!needs_fixup_) return;
  for (size_t k = 0; k < nout; ++k) {
    const ResultPlan& r = program_.results[k];
    const int64_t* dims = out_dims + k * kMaxRank;
    const int64_t rank = r.type.shape.rank();
    switch (r.kind) {
      case ResultKind::FromParam: outputs[k] = with_dims(inputs[static_cast<size_t>(r.index)], dims, rank); break;
      case ResultKind::FromConst:
        outputs[k] = with_dims(program_.nodes[static_cast<size_t>(r.index)].node->attrs.value, dims, rank);
        break;
      case ResultKind::FromSlot: outputs[k] = with_dims(st.slots()[static_cast<size_t>(r.index)], dims, rank); break;
      case ResultKind::Computed:
        if (!r.static_shape) outputs[k] = with_dims(outputs[k], dims, rank);
        break;
    }
  }
}

}  // namespace ag::jit
