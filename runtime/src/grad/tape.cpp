// The gradient tape: what it records, and the backward pass over the record.
//
// A tape follows tensors by identity: a concrete tensor by its TensorImpl, a symbolic one by its
// (frame, node, output). It records an op when one of the op's inputs is followed, and then
// follows the op's outputs; gradient() walks the record backwards from the target, calling each
// op's rule (rules.h). A tape records only in the frame it was created in (eagerly: outside any
// trace), so a tape around a Function call never sees the Function's trace, and a tape inside a
// traced function records that function's ops into its graph.
#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>
#include <array>

#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "ag/gradients.h"
#include "ag/operators/staging.h"
#include "ag/tensor_array.h"
#include "call_backward.h"
#include "rules.h"

namespace ag::detail {
namespace {

struct TapeKey {
  const void* base;
  uint64_t index;
  bool operator==(const TapeKey&) const = default;
};
struct TapeKeyHash {
  size_t operator()(const TapeKey& k) const {
    const uint64_t h = (reinterpret_cast<uintptr_t>(k.base) ^ (k.index * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    return static_cast<size_t>(h ^ (h >> 31));
  }
};

// The set of followed tensors: open addressing in one array, as recording inserts one key per
// op and looks up one per input (a node-based set allocated per insert).
class KeySet {
 public:
  KeySet() : slots_(64) {}
  bool contains(const TapeKey& k) const {
    for (size_t i = index(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (!slots_[i].base) return false;
      if (slots_[i] == k) return true;
    }
  }
  void insert(const TapeKey& k) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = index(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (!slots_[i].base) {
        slots_[i] = k;
        ++size_;
        return;
      }
      if (slots_[i] == k) return;
    }
  }

 private:
  size_t index(const TapeKey& k) const { return TapeKeyHash()(k) & (slots_.size() - 1); }
  void grow() {
    std::vector<TapeKey> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const TapeKey& k : old)
      if (k.base) insert(k);
  }
  std::vector<TapeKey> slots_;  // a power of two; base == nullptr: empty
  size_t size_ = 0;
};

TapeKey key_of(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  if (impl->kind == ImplKind::Symbolic) return {impl->frame, (uint64_t{impl->node} << 32) | impl->output};
  return {impl, ~uint64_t{0}};
}

// A source of gradient(): a tensor, or a Variable (the sum over its reads).
struct Source {
  Tensor tensor;
  const VariableState* variable = nullptr;
  DType dtype = DType::Float32;
  Shape shape;
};

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

struct TapeEntry {
  TapeEntry(OpKind op_, const Attrs& attrs_, SourceLoc loc_, std::span<const Tensor> inputs_,
            std::span<const Tensor> outputs_, const std::vector<std::shared_ptr<const Graph>>& subgraphs_,
            std::shared_ptr<const CallBackward> call_ = nullptr)
      : op(op_), loc(loc_), num_inputs(static_cast<uint32_t>(inputs_.size())), subgraphs(subgraphs_),
        call(std::move(call_)) {
    // The elementwise rules read no attributes: most entries skip the copy.
    const OpClass family = op_class(op_);
    if (family != OpClass::Unary && family != OpClass::UnaryFloat && family != OpClass::Binary) attrs.emplace(attrs_);
    const size_t n = inputs_.size() + outputs_.size();
    if (n > inline_values.size()) heap_values.resize(n);  // most ops fit inline: no allocation
    Tensor* v = data();
    std::copy(inputs_.begin(), inputs_.end(), v);
    std::copy(outputs_.begin(), outputs_.end(), v + inputs_.size());
    num_values = static_cast<uint32_t>(n);
  }
  std::span<const Tensor> inputs() const { return {data(), num_inputs}; }
  std::span<const Tensor> outputs() const { return {data() + num_inputs, num_values - num_inputs}; }

  const Attrs& attributes() const {
    static const Attrs none;
    return attrs ? *attrs : none;
  }

  OpKind op;
  std::optional<Attrs> attrs;
  SourceLoc loc;
  uint32_t num_inputs;
  uint32_t num_values = 0;
  // The inputs, then the outputs.
  std::array<Tensor, 4> inline_values;
  std::vector<Tensor> heap_values;
  Tensor* data() { return heap_values.empty() ? inline_values.data() : heap_values.data(); }
  const Tensor* data() const { return heap_values.empty() ? inline_values.data() : heap_values.data(); }
  std::vector<std::shared_ptr<const Graph>> subgraphs;
  std::shared_ptr<const CallBackward> call;  // a Function call recorded as one op
  std::vector<Tensor> residuals;              // its forward's intermediates its backward reads
};

}  // namespace

struct TapeState {
  TapeState(bool persistent_, TraceFrame* frame_) : persistent(persistent_), frame(frame_) {
    live().push_back(this);
    ++t_live_tapes;
  }
  ~TapeState() {
    auto& tapes = live();
    tapes.erase(std::find(tapes.begin(), tapes.end(), this));
    --t_live_tapes;
  }
  TapeState(const TapeState&) = delete;
  TapeState& operator=(const TapeState&) = delete;

  // The tapes alive on this thread, oldest first.
  static std::vector<TapeState*>& live() {
    thread_local std::vector<TapeState*> tapes;
    return tapes;
  }

  bool records_here() const { return recording && frame == current_frame(); }
  bool follows(const Tensor& t) const { return t.has_value() && followed.contains(key_of(t)); }
  void watch(const Tensor& t) {
    if (!t.has_value()) return;
    followed.insert(key_of(t));
    if (frame && frame == current_frame() && !t.is_symbolic() && carries_gradient(t)) lift(t);
  }
  // A concrete tensor watched inside a trace: ops of this frame read it as a constant (and the
  // tape records them with it as their input), but a staged branch or loop would capture it as
  // a constant of its sub-graph, out of the tape's sight. The frame lifts it to an identity node
  // that sub-graphs capture as an input; the tape records that identity, so the gradient the
  // construct gives the node reaches the tensor.
  void lift(const Tensor& t) {
    const Tensor* v = frame->lifted(t);
    const Tensor value = v ? *v : trace_op(OpKind::Identity, {&t, 1}, Attrs{}, SourceLoc{});
    if (!v) frame->lift(t, value);
    entries.emplace_back(OpKind::Identity, Attrs{}, SourceLoc{}, std::span<const Tensor>(&t, 1),
                         std::span<const Tensor>(&value, 1), std::vector<std::shared_ptr<const Graph>>{});
    followed.insert(key_of(value));
  }

  std::vector<Tensor> gradient(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                               const std::vector<Source>& sources, UnconnectedGradients unconnected,
                               SourceLoc loc = {});

  const bool persistent;
  TraceFrame* const frame;
  bool recording = true;
  bool used = false;
  std::deque<TapeEntry> entries;  // (a deque: recording never moves earlier entries)
  KeySet followed;
  struct Read {
    const VariableState* variable;
    Tensor value;
  };
  std::vector<Read> reads;
};

namespace {

// While a tape computes a gradient it records nothing itself (other tapes go on recording the
// backward ops: nested tapes give higher-order gradients).
class Paused {
 public:
  explicit Paused(TapeState& t) : tape_(t), was_(t.recording) { t.recording = false; }
  ~Paused() { tape_.recording = was_; }
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;

 private:
  TapeState& tape_;
  bool was_;
};

void accumulate(std::unordered_map<TapeKey, Tensor, TapeKeyHash>& grads, const Tensor& x, Tensor g) {
  auto [it, fresh] = grads.try_emplace(key_of(x), g);
  if (!fresh) it->second = it->second + g;
}

// A concrete tensor's fresh alias (same buffer, new identity).
Tensor alias_of(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  if (impl->kind != ImplKind::Concrete || !impl->storage) return t;
  const size_t offset = static_cast<size_t>(static_cast<const char*>(impl->data) - static_cast<const char*>(impl->storage->data));
  return make_view(impl->storage, offset, impl->dtype, impl->shape);
}

}  // namespace

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
  if (used && !persistent)
    throw ValueError(
        "GradientTape::gradient: this tape has already computed a gradient; a non-persistent tape computes one "
        "(create it with ag::GradientTape(/*persistent=*/true) to call gradient() several times)");
  used = true;
  Paused paused(*this);
  std::unordered_map<TapeKey, Tensor, TapeKeyHash> grads;
  std::vector<VariableGrad> variable_grads;  // from the sub-graphs of control flow
  std::optional<GradientLocScope> at_caller;
  if (loc.known()) at_caller.emplace(loc);
  for (size_t t = 0; t < targets.size(); ++t) {
    const Tensor& target = targets[t];
    if (!carries_gradient(target)) continue;  // nothing flows from it
    accumulate(grads, target, seeds.empty() ? ones_like(target) : seeds[t]);
  }
  at_caller.reset();
  for (size_t i = entries.size(); i-- > 0;) {
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
    GradientLocScope at_forward(e.loc);  // the rule's ops and the sums below take the op's line
    const std::vector<Tensor> dxs =
        e.call ? e.call->run(inputs, e.residuals, dys, reached, variable_grads) : grad_rule(e.op)(c);
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
  bool reads_variables = false;
  for (const auto& sub : subgraphs) reads_variables = reads_variables || !variables_read(*sub).empty();
  for (TapeState* tape : TapeState::live()) {
    if (!tape->records_here()) continue;
    if (!reads_variables && std::none_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return tape->follows(t); }))
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
  TapeState tape(/*persistent=*/false, current_frame());
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

namespace ag {

GradientTape::GradientTape(bool persistent)
    : state_(std::make_unique<detail::TapeState>(persistent, detail::current_frame())) {}
GradientTape::~GradientTape() = default;

void GradientTape::watch(const Tensor& t) { state_->watch(t); }
void GradientTape::watch(const Variable& v) { (void)v; }  // every Variable read while recording is watched

Tensor GradientTape::gradient(const Tensor& target, const GradSource& source, UnconnectedGradients unconnected,
                              Loc loc) {
  return state_->gradient({&target, 1}, {}, {detail::source_of(source)}, unconnected, loc)[0];
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<GradSource>& sources,
                                           UnconnectedGradients unconnected, Loc loc) {
  return state_->gradient({&target, 1}, {}, detail::sources_of(sources), unconnected, loc);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<GradSource>& sources,
                                           const Tensor& output_gradients, UnconnectedGradients unconnected, Loc loc) {
  return state_->gradient({&target, 1}, {&output_gradients, 1}, detail::sources_of(sources), unconnected, loc);
}

}  // namespace ag
