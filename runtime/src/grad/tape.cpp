// The gradient tape: what it records, and the backward pass over the record.
//
// A tape follows tensors by identity: a concrete tensor by its TensorImpl, a symbolic one by its
// (frame, node, output). It records an op when one of the op's inputs is followed, and then
// follows the op's outputs; gradient() walks the record backwards from the target, calling each
// op's rule (rules.h). A tape records only in the frame it was created in (eagerly: outside any
// trace), so a tape around a Function call never sees the Function's trace, and a tape inside a
// traced function records that function's ops into its graph.
#include <unordered_map>

#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "ag/tensor_array.h"
#include "call_backward.h"
#include "tape_state.h"

namespace ag::detail {

Source source_of(const GradSource& s) {
  if (const Variable* v = s.variable()) return {Tensor(), v->state().get(), v->dtype(), v->shape()};
  if (!s.tensor().has_value()) throw ValueError("GradientTape::gradient: a source tensor has no value");
  return {s.tensor(), nullptr, s.tensor().dtype(), s.tensor().shape()};
}

std::vector<Source> sources_of(const std::vector<GradSource>& sources) {
  std::vector<Source> out;
  for (const GradSource& s : sources) out.push_back(source_of(s));
  return out;
}

TapeState::TapeState(bool persistent_, bool watch_accessed_variables_, TraceFrame* frame_)
    : persistent(persistent_), watch_accessed_variables(watch_accessed_variables_), frame(frame_) {
  live().push_back(this);
  ++t_live_tapes;
}

TapeState::~TapeState() {
  auto& tapes = live();
  tapes.erase(std::find(tapes.begin(), tapes.end(), this));
  --t_live_tapes;
}

std::vector<TapeState*>& TapeState::live() {
  thread_local std::vector<TapeState*> tapes;
  return tapes;
}

void TapeState::watch(const Tensor& t) {
  if (!t.has_value()) return;
  followed.insert(key_of(t));
  if (frame && frame == current_frame() && !t.is_symbolic() && carries_gradient(t)) lift(t);
}

// A concrete tensor followed inside a trace: ops of this frame read it as a constant (and the
// tape records them with it as their input), but a staged branch or loop would capture it as
// a constant of its sub-graph, out of the tape's sight. The frame lifts it to an identity node
// that sub-graphs capture as an input; the tape records that identity, so the gradient the
// construct gives the node reaches the tensor.
void TapeState::lift(const Tensor& t) {
  const Tensor* v = frame->lifted(t);
  const Tensor value = v ? *v : trace_op(OpKind::Identity, {&t, 1}, Attrs{}, SourceLoc{});
  if (!v) frame->lift(t, value);
  entries.emplace_back(OpKind::Identity, Attrs{}, SourceLoc{}, std::span<const Tensor>(&t, 1),
                       std::span<const Tensor>(&value, 1), std::vector<std::shared_ptr<const Graph>>{});
  followed.insert(key_of(value));
}

void TapeState::watch_variable(const std::shared_ptr<VariableState>& v) {
  if (!watches(v.get())) watched_variables.push_back(v);
}

bool TapeState::watches(const VariableState* v) const {
  return std::any_of(watched_variables.begin(), watched_variables.end(), [&](const auto& w) { return w.get() == v; });
}

void tape_rollback(TraceFrame* frame, uint32_t first_dropped) {
  auto dropped = [&](const Tensor& t) {
    const TensorImpl* impl = t.has_value() ? detail::impl_of(t) : nullptr;
    return impl && impl->kind == ImplKind::Symbolic && impl->frame && impl->frame->frame == frame &&
           impl->node >= first_dropped;
  };
  for (TapeState* tape : TapeState::live()) {
    if (tape->frame != frame) continue;
    // What a tape records in its frame is appended in program order: the dropped ops are last.
    while (!tape->entries.empty()) {
      const std::span<const Tensor> outputs = tape->entries.back().outputs();
      if (!std::any_of(outputs.begin(), outputs.end(), dropped)) break;
      tape->entries.pop_back();
    }
    std::erase_if(tape->reads, [&](const TapeState::Read& r) { return dropped(r.value); });
    KeySet kept;
    tape->followed.for_each([&](const TapeKey& k) {
      // (A symbolic tensor's key is its frame's token and node; a concrete one's, its TensorImpl.)
      const bool symbolic = k.index != ~uint64_t{0};
      if (!(symbolic && static_cast<const FrameToken*>(k.base)->frame == frame && (k.index >> 32) >= first_dropped))
        kept.insert(k);
    });
    tape->followed = std::move(kept);
  }
}

void TapeState::reset() {
  entries.clear();
  followed = KeySet();
  reads.clear();
  watched_variables.clear();
  used = false;
  recording = true;
}

GradientCall::GradientCall(TapeState& tape, const char* what) : tape_(tape), was_(tape.recording) {
  if (tape.used && !tape.persistent)
    throw ValueError(fmt::format(
        "GradientTape::{}: this tape has already computed a gradient; a non-persistent tape computes one (create "
        "it with ag::GradientTape(/*persistent=*/true) to call gradient() several times)",
        what));
  tape.used = true;
  // A non-persistent tape records none of its own backward (other tapes go on recording it:
  // nested tapes give higher-order gradients); a persistent one records it, so that it can
  // differentiate its own gradient (TensorFlow's testHigherOrderGradient).
  if (!tape.persistent) tape.recording = false;
}

GradientCall::~GradientCall() { tape_.recording = tape_.persistent && was_; }

namespace {

void accumulate(std::unordered_map<TapeKey, Tensor, TapeKeyHash>& grads, const Tensor& x, Tensor g) {
  auto [it, fresh] = grads.try_emplace(key_of(x), g);
  if (!fresh) it->second = it->second + g;
}

// An op's gradient rule. Rules read static shapes (to sum a broadcast gradient back, say): on a
// value of unknown rank while tracing that is an UnimplementedError naming the op's line.
std::vector<Tensor> run_rule(const GradContext& c) {
  try {
    return grad_rule(c.op)(c);
  } catch (const ValueError& e) {
    auto unknown = [](const Tensor& t) { return t.has_value() && t.has_unknown_rank(); };
    if (std::none_of(c.inputs.begin(), c.inputs.end(), unknown) && std::none_of(c.outputs.begin(), c.outputs.end(), unknown))
      throw;
    throw UnimplementedError(fmt::format("the gradient of {}{} needs the ranks of its operands, but one has an unknown "
                                         "rank while tracing; give it a rank with ag::ensure_shape, or take this "
                                         "gradient outside the Function, where every rank is known ({})",
                                         user_op_name(c.op), at(c.loc), e.what()));
  }
}

}  // namespace

Tensor alias_of(const Tensor& t) {
  const TensorImpl* impl = detail::impl_of(t);
  if (impl->kind != ImplKind::Concrete || !impl->storage) return t;
  const size_t offset = static_cast<size_t>(static_cast<const char*>(impl->data) - static_cast<const char*>(impl->storage->data));
  return make_view(impl->storage, offset, impl->dtype, impl->shape);
}

// Whether a gradient can flow through `t`: a floating-point tensor, or a TensorArray of them
// (whose gradient is a dense tensor of its stacked shape, rules_list.cpp).
bool carries_gradient(const Tensor& t) {
  if (!t.has_value()) return false;
  if (t.dtype() == DType::List) return is_floating(type_of(t).elem_dtype);
  return is_floating(t.dtype());
}

// Zeros for a value no gradient reached: of its shape, or a TensorArray's stacked shape.
Tensor zero_gradient(const Tensor& t) {
  if (t.dtype() != DType::List) return zeros_like(t);
  return zeros_like(TensorArray::from_handle(t, type_of(t).elem_dtype).stack());
}

std::vector<Tensor> TapeState::gradient(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                                        const std::vector<Source>& sources, UnconnectedGradients unconnected,
                                        SourceLoc loc) {
  const GradientCall call(*this, "gradient");
  return backward(targets, seeds, sources, unconnected, loc);
}

std::vector<Tensor> TapeState::backward(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                                        const std::vector<Source>& sources, UnconnectedGradients unconnected,
                                        SourceLoc loc) {
  // (Entries this walk records, on a persistent tape, come after `end`: not walked now.)
  const size_t end = entries.size();
  std::unordered_map<TapeKey, Tensor, TapeKeyHash> grads;
  std::vector<VariableGrad> variable_grads;  // from the sub-graphs of control flow
  std::optional<CallerLocScope> at_caller;
  if (loc.known()) at_caller.emplace(loc);
  for (size_t t = 0; t < targets.size(); ++t) {
    const Tensor& target = targets[t];
    if (!carries_gradient(target)) continue;  // nothing flows from it
    accumulate(grads, target, seeds.empty() ? ones_like(target) : seeds[t]);
  }
  at_caller.reset();
  for (size_t i = end; i-- > 0;) {
    const TapeEntry& e = entries[i];
    const std::span<const Tensor> inputs = e.inputs(), outputs = e.outputs();
    std::vector<Tensor> dys(outputs.size());
    std::vector<bool> reached(outputs.size(), false);
    for (size_t k = 0; k < outputs.size(); ++k) {
      auto it = grads.find(key_of(outputs[k]));
      if (it != grads.end()) {
        dys[k] = it->second;
        reached[k] = true;
      }
    }
    if (std::none_of(reached.begin(), reached.end(), [](bool r) { return r; })) continue;
    for (size_t k = 0; k < dys.size(); ++k)
      if (!dys[k].has_value() && carries_gradient(outputs[k])) dys[k] = zero_gradient(outputs[k]);
    const GradContext c{e.op, e.attributes(), e.loc, inputs, outputs, dys, reached, e.subgraphs, variable_grads};
    CallerLocScope at_forward(e.loc);  // the rule's ops and the sums below take the op's line
    const std::vector<Tensor> dxs = e.call     ? e.call->run(inputs, e.residuals, dys, reached, variable_grads)
                                    : e.custom ? (*e.custom)(dys)
                                               : run_rule(c);
    for (size_t j = 0; j < dxs.size() && j < inputs.size(); ++j) {
      const Tensor& x = inputs[j];
      if (!dxs[j].has_value() || !follows(x) || !carries_gradient(x)) continue;
      accumulate(grads, x, dxs[j]);
    }
  }
  if (loc.known()) at_caller.emplace(loc);  // sums over a Variable's reads, zeros
  std::vector<Tensor> out;
  out.reserve(sources.size());
  for (const Source& s : sources) {
    Tensor g;
    auto add = [&](const Tensor& t) { g = g.has_value() ? g + t : t; };
    if (s.variable) {
      for (const Read& r : reads) {
        if (r.variable != s.variable) continue;
        auto it = grads.find(key_of(r.value));
        if (it != grads.end()) add(it->second);
      }
      for (const VariableGrad& vg : variable_grads)
        if (vg.variable == s.variable) add(vg.grad);
      if (!watches(s.variable)) g = Tensor();  // watch_accessed_variables = false, never watched: none
    } else {
      auto it = grads.find(key_of(s.tensor));
      if (it != grads.end()) g = it->second;
    }
    if (!g.has_value() && unconnected == UnconnectedGradients::zero && (is_floating(s.dtype) || carries_gradient(s.tensor)))
      g = s.variable ? zeros(s.shape, s.dtype) : zero_gradient(s.tensor);
    const bool differentiable = is_floating(s.dtype) || carries_gradient(s.tensor);
    out.push_back(differentiable ? g : Tensor());  // integer and bool sources: none
  }
  return out;
}

void tape_record(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc,
                 std::span<const Tensor> outputs, const std::vector<std::shared_ptr<const Graph>>& subgraphs) {
  if (!op_info(op).differentiable) return;
  const GradRule rule = grad_rule(op);
  const bool unsupported = rule == &grad_unsupported;  // recorded whatever the dtypes: it must raise
  // Control flow whose sub-graphs read Variables is recorded even when no input is followed:
  // every tape watches the Variables read while it records.
  std::vector<std::shared_ptr<VariableState>> read;
  for (const auto& sub : subgraphs)
    for (auto& v : variables_read(*sub)) read.push_back(std::move(v));
  for (TapeState* tape : TapeState::live()) {
    if (!tape->records_here()) continue;
    if (tape->watch_accessed_variables)
      for (const auto& v : read) tape->watch_variable(v);
    if (read.empty() && std::none_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return tape->follows(t); }))
      continue;
    // The outputs to follow: the floating-point ones (an unsupported op's all, so that its
    // gradient raises), except an input given back (the identity there: nothing to record).
    std::vector<Tensor> follow;
    for (const Tensor& o : outputs) {
      if (!o.has_value() || (!unsupported && !carries_gradient(o))) continue;
      if (!unsupported && std::any_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return key_of(t) == key_of(o); }))
        continue;
      follow.push_back(o);
    }
    if (follow.empty()) continue;
    tape->entries.emplace_back(op, attrs, loc, inputs, outputs, subgraphs);
    for (const Tensor& o : follow) tape->watch(o);
  }
}

void tape_record_call(const std::shared_ptr<const CallBackward>& backward, std::span<const Tensor> inputs,
                      std::span<const Tensor> outputs, std::vector<Tensor> residuals) {
  for (TapeState* tape : TapeState::live()) {
    if (!tape->records_here()) continue;
    if (tape->watch_accessed_variables)
      for (const auto& v : backward->variables()) tape->watch_variable(v);
    if (!backward->reads_variables() &&
        std::none_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return tape->follows(t); }))
      continue;
    tape->entries.emplace_back(OpKind::Identity, Attrs{}, SourceLoc{}, inputs, outputs,
                               std::vector<std::shared_ptr<const Graph>>{}, backward);
    tape->entries.back().residuals = residuals;
    for (const Tensor& o : outputs)
      if (o.has_value() && is_floating(o.dtype())) tape->watch(o);
  }
}

void tape_record_custom(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                        std::shared_ptr<const CustomGradFn> grad) {
  for (TapeState* tape : TapeState::live()) {
    if (!tape->records_here()) continue;
    if (std::none_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return tape->follows(t); })) continue;
    tape->entries.emplace_back(OpKind::CustomGradient, Attrs{}, SourceLoc{}, inputs, outputs,
                               std::vector<std::shared_ptr<const Graph>>{});
    tape->entries.back().custom = grad;
    for (const Tensor& o : outputs)
      if (carries_gradient(o)) tape->watch(o);
  }
}

void tape_note_capture(TraceFrame* frame, const Tensor& outer, const Tensor& inner) {
  for (TapeState* tape : TapeState::live()) {
    if (!tape->recording || tape->frame != frame || !tape->follows(outer)) continue;
    tape->entries.emplace_back(OpKind::Identity, Attrs{}, SourceLoc{}, std::span<const Tensor>(&outer, 1),
                               std::span<const Tensor>(&inner, 1), std::vector<std::shared_ptr<const Graph>>{});
    tape->followed.insert(key_of(inner));
  }
}

Tensor tape_alias(const Tensor& t) { return alias_of(t); }

Tensor distinct_source(const Tensor& t, std::vector<Tensor>& seen) {
  Tensor out = t;
  if (t.has_value() && std::any_of(seen.begin(), seen.end(), [&](const Tensor& s) { return s.has_value() && key_of(s) == key_of(t); }))
    out = t.is_symbolic() ? trace_op(OpKind::Identity, {&t, 1}, Attrs{}, SourceLoc{}) : alias_of(t);
  seen.push_back(out);
  return out;
}

Tensor tape_variable_read(const std::shared_ptr<VariableState>& v, Tensor value) {
  if (!is_floating(v->dtype)) return value;
  bool aliased = false;
  for (TapeState* tape : TapeState::live()) {
    if (!tape->records_here()) continue;
    if (tape->watch_accessed_variables) tape->watch_variable(v);
    else if (!tape->watches(v.get())) continue;
    if (!aliased) {
      value = alias_of(value);
      aliased = true;
    }
    tape->watch(value);
    tape->reads.push_back({v.get(), value});
  }
  return value;
}

bool tape_records_in_current_frame() {
  if (!tapes_alive()) return false;
  for (TapeState* tape : TapeState::live())
    if (tape->records_here()) return true;
  return false;
}

bool eager_tape_follows(std::span<const Tensor> inputs, bool reads_variables) {
  for (TapeState* tape : TapeState::live()) {
    if (!tape->recording || tape->frame != nullptr) continue;
    if (reads_variables) return true;
    for (const Tensor& t : inputs)
      if (tape->follows(t)) return true;
  }
  return false;
}

std::vector<Tensor> replay_gradient(const Graph& g, std::span<const Tensor> xs, std::span<const Tensor> dys,
                                    std::span<const size_t> wrt,
                                    std::span<const std::shared_ptr<VariableState>> variables,
                                    std::vector<Tensor>* forward_outputs, const ReplayHooks* hooks) {
  TapeState tape(/*persistent=*/false, /*watch_accessed_variables=*/true, current_frame());
  for (size_t k : wrt) tape.watch(xs[k]);
  std::vector<Tensor> outs(g.results.size());
  replay_graph(g, xs, outs, hooks);
  if (forward_outputs) *forward_outputs = outs;
  std::vector<Source> sources;
  for (size_t k : wrt) sources.push_back({xs[k], nullptr, xs[k].dtype(), xs[k].shape()});
  for (const auto& v : variables) sources.push_back({Tensor(), v.get(), v->dtype, v->shape});
  return tape.gradient(outs, dys, sources, UnconnectedGradients::zero);
}

std::vector<std::shared_ptr<VariableState>> variables_read(const Graph& g) {
  std::vector<std::shared_ptr<VariableState>> out;
  auto visit = [&](auto& self, const Graph& graph) -> void {
    for (const Node& n : graph.nodes) {
      if (n.op == OpKind::ReadVariable && is_floating(n.outputs[0].dtype) &&
          std::none_of(out.begin(), out.end(), [&](const auto& v) { return v.get() == n.attrs.variable.get(); }))
        out.push_back(n.attrs.variable);
      for (const auto& sub : n.subgraphs) self(self, *sub);
    }
  };
  visit(visit, g);
  return out;
}

}  // namespace ag::detail
