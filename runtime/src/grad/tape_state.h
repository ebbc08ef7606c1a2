// The state behind an ag::GradientTape: the tensors it follows, the ops it recorded, the
// Variables it watches. tape.cpp records and runs the backward pass; gradient_tape.cpp is the
// public API (GradientTape, jacobians).
#pragma once

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "../trace/frame.h"
#include "ag/detail/ops_internal.h"
#include "ag/gradients.h"
#include "rules.h"

namespace ag::detail {

class CallBackward;

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
  template <class F>
  void for_each(F&& f) const {
    for (const TapeKey& k : slots_)
      if (k.base) f(k);
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

inline TapeKey key_of(const Tensor& t) {
  const TensorImpl* impl = detail::impl_of(t);
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

Source source_of(const GradSource& s);
std::vector<Source> sources_of(const std::vector<GradSource>& sources);

// The gradient of an eager custom_gradient call: the gradients of its inputs (one each, no value
// for none) from those of its outputs.
using CustomGradFn = std::function<std::vector<Tensor>(std::span<const Tensor> dys)>;

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
  std::shared_ptr<const CustomGradFn> custom;  // an eager custom_gradient call recorded as one op
};

struct TapeState {
  TapeState(bool persistent, bool watch_accessed_variables, TraceFrame* frame);
  ~TapeState();
  TapeState(const TapeState&) = delete;
  TapeState& operator=(const TapeState&) = delete;

  // The tapes alive on this thread, oldest first.
  static std::vector<TapeState*>& live();

  bool records_here() const { return recording && frame == current_frame(); }
  bool follows(const Tensor& t) const { return t.has_value() && followed.contains(key_of(t)); }
  void watch(const Tensor& t);
  // A Variable the tape watches: every read of it while recording is a source of its gradient.
  void watch_variable(const std::shared_ptr<VariableState>& v);
  bool watches(const VariableState* v) const;
  // Forgets everything recorded (GradientTape::reset).
  void reset();

  // d targets / d sources, once for a non-persistent tape (which then stops recording).
  std::vector<Tensor> gradient(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                               const std::vector<Source>& sources, UnconnectedGradients unconnected, SourceLoc loc = {});
  // One walk of the record backwards from the targets (each seeded with `seeds`, or ones).
  std::vector<Tensor> backward(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                               const std::vector<Source>& sources, UnconnectedGradients unconnected, SourceLoc loc);
  // The Jacobians of `target` with respect to `sources` (batch: per row of dim 0).
  std::vector<Tensor> jacobians(const Tensor& target, const std::vector<Source>& sources,
                                UnconnectedGradients unconnected, bool batch, SourceLoc loc);

  const bool persistent;
  const bool watch_accessed_variables;
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
  // Watched Variables, in the order first watched or read (GradientTape::watched_variables).
  std::vector<std::shared_ptr<VariableState>> watched_variables;

 private:
  void lift(const Tensor& t);
};

// Checks a gradient() call may run on `tape` and marks it used; while it lives, a non-persistent
// tape records nothing, and after it such a tape stops recording for good (TensorFlow pops it).
class GradientCall {
 public:
  GradientCall(TapeState& tape, const char* what);
  ~GradientCall();
  GradientCall(const GradientCall&) = delete;
  GradientCall& operator=(const GradientCall&) = delete;

 private:
  TapeState& tape_;
  bool was_;
};

// An eager custom_gradient call: every recording tape that follows one of `inputs` records it as
// one entry whose backward is `grad` (custom_gradient.cpp).
void tape_record_custom(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                        std::shared_ptr<const CustomGradFn> grad);

// A concrete tensor's fresh alias (same buffer, new identity).
Tensor alias_of(const Tensor& t);

}  // namespace ag::detail
