// Tracing frames: values, captures across nested frames, constants, leaks and rollback.
#include "frame.h"

#include "ag/detail/tape.h"

#include <fmt/format.h>

#include "ag/detail/tensor_list.h"
#include "ag/detail/ops_internal.h"
#include "trace_depth.h"

namespace ag::detail {

void retain_token(FrameToken* t) { t->refs.fetch_add(1, std::memory_order_relaxed); }
void release_token(FrameToken* t) {
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete t;
}

FrameScope::FrameScope(TraceFrame* frame) : saved_(t_current_frame) { t_current_frame = frame; }
FrameScope::~FrameScope() { t_current_frame = saved_; }

TraceFrame::TraceFrame(TraceFrame* parent_frame, std::shared_ptr<TraceRoot> trace_root, std::string name, SourceLoc l)
    : parent(parent_frame), root(std::move(trace_root)), loc(l), depth(parent_frame ? parent_frame->depth + 1 : 0) {
  // Before anything is allocated: the constructor may throw.
  if (parent) check_trace_depth(parent, depth, name, loc);
  token_ = new FrameToken;
  graph.name = std::move(name);
  token_->frame = this;
  token_->function_name = root->function_name;
}

TraceFrame::~TraceFrame() {
  close();
  release_token(token_);
}

void TraceFrame::close() {
  token_->open = false;
  token_->frame = nullptr;
}

bool TraceFrame::is_ancestor_of(const TraceFrame* f) const {
  for (; f; f = f->parent)
    if (f == this) return true;
  return false;
}

void throw_leaked(const Tensor& t, SourceLoc loc) {
  const FrameToken* tok = detail::impl_of(t)->frame;
  const std::string fn = tok && tok->function_name ? *tok->function_name : std::string("a traced function");
  if (tok && tok->open)
    throw ConversionError(fmt::format(
        "a symbolic tensor of the trace of '{}' is used outside that trace (in another trace or thread){}; pass "
        "it as an argument or return it instead",
        fn, at(loc)));
  throw ConversionError(fmt::format(
      "tensor leaked from a traced function: it was created while tracing '{}' and is used after that trace "
      "ended{}. Tensors made while tracing exist only inside the graph: return them from the function, or "
      "keep state in an ag::Variable",
      fn, at(loc)));
}

Tensor TraceFrame::symbolic(ValueId v) {
  const TensorType& type = graph.type(v);
  auto* impl = new TensorImpl;
  impl->kind = ImplKind::Symbolic;
  impl->dtype = type.dtype;
  impl->elem_dtype = type.elem_dtype;
  impl->rank_unknown = type.rank_unknown;
  impl->elem_shape_varies = type.elem_shape_varies;
  impl->shape = type.shape;
  retain_token(token_);
  impl->frame = token_;
  impl->node = v.node;
  impl->output = v.index;
  return detail::adopt(impl);
}

ValueId TraceFrame::emit(Node n) { return graph.add(std::move(n)); }

Tensor TraceFrame::add_param(const TensorType& type, std::string name) {
  ValueId v = graph.add_param(type, loc);
  graph.nodes[v.node].attrs.strings = {std::move(name)};
  return symbolic(v);
}

ValueId TraceFrame::value_of(const Tensor& t, OpKind op, SourceLoc l) { return value_of(t, op, l, /*read=*/true); }

ValueId TraceFrame::value_of(const Tensor& t, OpKind op, SourceLoc l, bool read) {
  check_readable(t, op, l);
  const TensorImpl* impl = detail::impl_of(t);
  if (impl->kind == ImplKind::Concrete) {
    if (parent && tapes_alive()) [[unlikely]]
      for (const TraceFrame* f = parent; f; f = f->parent)
        if (const Tensor* v = f->lifted(t)) return value_of(*v, op, l);
    auto it = consts_.find(impl);
    if (it != consts_.end()) return it->second;
    Node n;
    n.op = OpKind::Const;
    // A TensorArray is mutable eagerly: the graph keeps a snapshot of it as it is now.
    n.attrs.value = t.dtype() == DType::List ? make_list_tensor(writable_list(t)) : t;
    n.outputs = {type_of(t)};
    n.loc = l;
    ValueId v = emit(std::move(n));
    consts_.emplace(impl, v);
    const_keepalive_.push_back(t);
    return v;
  }
  const FrameToken* tok = impl->frame;
  if (!tok->open || (tok->frame != this && !tok->frame->is_ancestor_of(this))) throw_leaked(t, l);
  // A read, where it happens (not the captures through enclosing frames that carry it there,
  // nor the operands a staged construct passes its sub-graphs): assert that the loop that gave
  // the value ran.
  if (impl->defined_check && read && op_class(op) != OpClass::Control && asserted_.insert(impl->defined_check).second)
      [[unlikely]] {
    Node check;
    check.op = OpKind::Assert;
    check.inputs = {value_of(impl->defined_check->defined, OpKind::Assert, l)};
    check.attrs.strings = {impl->defined_check->message, ""};
    check.loc = l.known() ? l : loc;
    emit(std::move(check));
  }
  if (tok->frame == this) return {impl->node, impl->output};
  const auto key = std::make_tuple(tok, impl->node, impl->output);
  auto it = capture_index_.find(key);
  if (it != capture_index_.end()) return {it->second, 0};
  ValueId in_parent = parent->value_of(t, op, l, /*read=*/false);
  Tensor outer = parent->symbolic(in_parent);
  ValueId param = graph.add_param(parent->graph.type(in_parent), loc);
  graph.nodes[param.node].attrs.strings = {"capture"};
  if (tapes_alive()) [[unlikely]]
    tape_note_capture(this, outer, symbolic(param));
  captures_.push_back({std::move(outer), param.node});
  capture_index_.emplace(key, param.node);
  return param;
}

const Tensor* TraceFrame::lifted(const Tensor& concrete) const {
  auto it = lifted_.find(detail::impl_of(concrete));
  return it == lifted_.end() ? nullptr : &it->second.second;
}

void TraceFrame::lift(const Tensor& concrete, Tensor value) {
  lifted_.emplace(detail::impl_of(concrete), std::pair{concrete, std::move(value)});
}

TraceFrame::Checkpoint TraceFrame::checkpoint() {
  Checkpoint cp;
  for (TraceFrame* f = this; f; f = f->parent)
    cp.entries.push_back({f, f->graph.nodes.size(), f->graph.params.size(), f->captures_.size()});
  return cp;
}

void TraceFrame::rollback(const Checkpoint& cp) {
  for (const auto& e : cp.entries) {
    TraceFrame* f = e.frame;
    f->graph.nodes.resize(e.nodes);
    f->graph.params.resize(e.params);
    f->captures_.resize(e.captures);
    for (auto it = f->capture_index_.begin(); it != f->capture_index_.end();)
      it = it->second >= e.nodes ? f->capture_index_.erase(it) : std::next(it);
    for (auto it = f->consts_.begin(); it != f->consts_.end();)
      it = it->second.node >= e.nodes ? f->consts_.erase(it) : std::next(it);
    f->asserted_.clear();  // (an assert emitted since may be gone: asserting again is harmless)
    for (auto it = f->lifted_.begin(); it != f->lifted_.end();) {
      const TensorImpl* v = detail::impl_of(it->second.second);
      it = v->kind == ImplKind::Symbolic && v->node >= e.nodes ? f->lifted_.erase(it) : std::next(it);
    }
    if (tapes_alive()) tape_rollback(f, static_cast<uint32_t>(e.nodes));
  }
}

std::string symbolic_name(const Tensor& t) {
  const FrameToken* tok = detail::impl_of(t)->frame;
  if (!tok || !tok->open) return "leaked";
  const Node& n = tok->frame->graph.nodes[detail::impl_of(t)->node];
  if (n.op == OpKind::Placeholder && !n.attrs.strings.empty()) return n.attrs.strings[0];
  std::string name(op_name(n.op));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name + "_" + std::to_string(detail::impl_of(t)->node);
}

Tensor trace_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  TraceFrame* f = current_frame();
  if (!f) {
    for (const Tensor& t : inputs)
      if (t.is_symbolic()) throw_leaked(t, loc);
    throw InternalError("trace_op without a frame");
  }
  if (t_caller_loc.known()) loc = t_caller_loc;  // library code on the user's behalf
  else if (!loc.known()) loc = f->loc;            // an op without a location: the enclosing construct's line
  Node n;
  n.op = op;
  n.loc = loc;
  n.attrs = attrs;
  std::vector<TensorType> types;
  types.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    n.inputs.push_back(f->value_of(t, op, loc));
    types.push_back(f->graph.type(n.inputs.back()));
  }
  n.outputs = {infer_type(op, types, attrs, loc)};
  return f->symbolic(f->emit(std::move(n)));
}

std::vector<Tensor> trace_node(OpKind op, std::span<const Tensor> inputs, Attrs attrs, std::vector<TensorType> outputs,
                               std::vector<std::shared_ptr<const Graph>> subgraphs, SourceLoc loc) {
  TraceFrame* f = current_frame();
  if (!f) throw InternalError("trace_node without a frame");
  if (t_caller_loc.known()) loc = t_caller_loc;
  else if (!loc.known()) loc = f->loc;
  Node n;
  n.op = op;
  n.loc = loc;
  n.attrs = std::move(attrs);
  n.outputs = std::move(outputs);
  n.subgraphs = std::move(subgraphs);
  for (const Tensor& t : inputs) n.inputs.push_back(f->value_of(t, op, loc));
  const size_t num_outputs = n.outputs.size();
  // A gradient tape records staged control flow as one op (its rule goes through the sub-graphs).
  const bool record = tapes_alive() && op_class(op) == OpClass::Control;
  const Attrs kept = record ? n.attrs : Attrs{};
  const auto kept_subgraphs = record ? n.subgraphs : std::vector<std::shared_ptr<const Graph>>{};
  ValueId v = f->emit(std::move(n));
  std::vector<Tensor> out;
  for (uint32_t i = 0; i < num_outputs; ++i) out.push_back(f->symbolic({v.node, i}));
  if (record) tape_record(op, inputs, kept, loc, out, kept_subgraphs);
  return out;
}

}  // namespace ag::detail
