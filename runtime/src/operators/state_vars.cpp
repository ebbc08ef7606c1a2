// State variables of staged constructs.
#include "state_vars.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>

#include "../function/signature.h"
#include "../ops/internal_ops.h"
#include "ag/construct.h"
#include "ag/ops.h"

namespace ag::detail {

namespace {
std::vector<Tensor>& vector_of(const StateVar& v) { return *static_cast<std::vector<Tensor>*>(v.ptr); }

void check_length(const StateVar& v, const char* construct, SourceLoc loc) {
  const size_t now = vector_of(v).size();
  if (now != v.length)
    throw ConversionError(fmt::format(
        "'{}' (a std::vector<ag::Tensor>) changed its length from {} to {} inside the tensor-dependent {}{}; a vector "
        "that staged control flow carries must keep its length there (grow an ag::TensorArray instead)",
        v.name, v.length, now, construct, where(loc)));
}

// The element of a std::vector<ag::Tensor> that `v` names (check_lengths reports a changed
// length with its construct first; this is the guard against a dangling element).
Tensor& vector_element(const StateVar& v) {
  check_length(v, "control flow", {});
  return vector_of(v)[static_cast<size_t>(v.element)];
}
}  // namespace

void check_lengths(std::span<const StateVar> vars, const char* construct, SourceLoc loc) {
  for (const StateVar& v : vars)
    if (v.kind == StateKind::VectorLength) check_length(v, construct, loc);
}

bool holds_tensor(const StateVar& v) { return v.kind != StateKind::VectorLength && v.kind != StateKind::Other; }

Tensor read_var(const StateVar& v) {
  switch (v.kind) {
    case StateKind::Tensor: return *static_cast<const Tensor*>(v.ptr);
    case StateKind::TensorArray: return static_cast<const TensorArray*>(v.ptr)->handle();
    case StateKind::TensorInVector: return vector_element(v);
    case StateKind::VectorLength:
    case StateKind::Other: break;
  }
  throw InternalError("read_var of a non-tensor");
}

void write_var(const StateVar& v, const Tensor& value) {
  switch (v.kind) {
    case StateKind::Tensor: *static_cast<Tensor*>(v.ptr) = value; return;
    case StateKind::TensorArray: static_cast<TensorArray*>(v.ptr)->handle() = value; return;
    case StateKind::TensorInVector: vector_element(v) = value; return;
    case StateKind::VectorLength:
    case StateKind::Other: break;
  }
  throw InternalError("write_var of a non-tensor");
}

std::vector<Tensor> read_vars(std::span<const StateVar> vars) {
  std::vector<Tensor> out;
  out.reserve(vars.size());
  for (const StateVar& v : vars) out.push_back(holds_tensor(v) ? read_var(v) : Tensor());
  return out;
}

void write_vars(std::span<const StateVar> vars, const std::vector<Tensor>& values) {
  for (size_t i = 0; i < vars.size(); ++i)
    if (holds_tensor(vars[i])) write_var(vars[i], values[i]);
}

const char* field_state_name(const char* parent, std::string_view field) {
  static std::mutex mu;
  static auto* names = new std::set<std::string, std::less<>>;  // never freed: names outlive every construct
  std::string name = fmt::format("{}.{}", parent, field);
  std::lock_guard lock(mu);
  return names->insert(std::move(name)).first->c_str();
}

std::string where(SourceLoc loc) { return loc.known() ? " at " + loc.str() : std::string(); }

bool is_generated_name(const char* name) { return std::string_view(name).starts_with("ag__"); }

std::string display_name(const StateVar& v) {
  return v.element < 0 ? std::string(v.name) : fmt::format("{}[{}]", v.name, v.element);
}

std::string describe_var(const StateVar& v) {
  std::string_view n = v.name;
  if (n.starts_with("ag__retval")) return "the return value";
  if (n.starts_with("ag__")) return fmt::format("the generated variable '{}'", n);
  return fmt::format("'{}'", display_name(v));
}

namespace {
// "a float", "an int": the article for a type's name in a message.
const char* article_for(std::string_view type_name) {
  return !type_name.empty() && std::string_view("aeiou").find(type_name[0]) != std::string_view::npos ? "an" : "a";
}
}  // namespace

void forbid_untraceable(std::span<const StateVar> vars, const char* construct, SourceLoc loc) {
  for (const StateVar& v : vars) {
    const std::string_view name = v.name;
    if (name.starts_with("::"))
      throw ConversionError(fmt::format(
          "the global variable '{}' is modified inside a tensor-dependent {}{}; a staged construct runs in the graph "
          "and cannot change C++ globals. Keep state in an ag::Variable, or return the value",
          name.substr(2), construct, where(loc)));
    if (v.kind == StateKind::Other) {
      const std::string type_name = demangle(*v.type);
      throw ConversionError(fmt::format(
          "'{}' ({} {}) is modified inside a tensor-dependent {}{}; only locals of tensor type can change inside "
          "staged control flow: ag::Tensor, ag::TensorArray, a std::array of them, a std::vector<ag::Tensor>, or "
          "a struct of those. Make it an ag::Tensor, or move the change out of the {}",
          v.name, article_for(type_name), type_name, construct, where(loc), construct));
    }
  }
}

Tensor zeros_of_type(const TensorType& t) {
  if (t.dtype == DType::List) return TensorArray(t.elem_dtype).handle();
  Shape s = t.shape;
  for (int64_t& d : s)
    if (d < 0) d = 0;
  return zeros(s, t.dtype);
}

Tensor staged_condition(const Tensor& c, const char* construct, SourceLoc loc) {
  check_readable(c, OpKind::If, loc);
  const Shape& s = c.shape();
  if (s.rank() != 0) {
    const int64_t n = s.num_elements();
    if (n != 1)
      throw ValueError(fmt::format("the condition of a tensor-dependent {}{} must be a scalar, got shape {}; use "
                                   "ag::reduce_any or ag::reduce_all",
                                   construct, where(loc), s.str()));
    Attrs scalar;  // reshape to []
    return staged_condition(op(OpKind::Reshape, {c}, loc, scalar), construct, loc);
  }
  if (c.dtype() == DType::Bool) return c;
  if (c.dtype() == DType::List) throw TypeError(fmt::format("a TensorArray is not a condition{}", where(loc)));
  return op(OpKind::NotEqual, {c, scalar_like(c, 0)}, loc);
}

bool truth(const Tensor& c, const char* construct, SourceLoc loc) {
  if (!c.has_value()) throw_undefined(c, construct, loc);
  if (c.shape().num_elements() != 1)
    throw ValueError(fmt::format("the condition of {}{} must be a scalar, got shape {}; use ag::reduce_any or "
                                 "ag::reduce_all",
                                 construct, where(loc), c.shape().str()));
  return element_as_double(c, 0) != 0;
}

TensorType value_type(TraceFrame& frame, const Tensor& t, SourceLoc loc) {
  return frame.graph.type(materialize(frame, t, loc));
}

ValueId materialize(TraceFrame& frame, const Tensor& t, SourceLoc loc) {
  return frame.value_of(t, OpKind::Identity, loc);
}

Tensor undefined_var(std::string message, const TensorType* type) {
  Tensor t = make_undefined(std::move(message));
  if (type) {
    TensorImpl* impl = detail::impl_of(t);
    impl->typed_undefined = true;
    impl->dtype = type->dtype;
    impl->shape = type->shape;
    impl->elem_dtype = type->elem_dtype;
    impl->rank_unknown = type->rank_unknown;
    impl->elem_shape_varies = type->elem_shape_varies;
  }
  return t;
}

std::optional<TensorType> undefined_type(const Tensor& t) {
  const TensorImpl* impl = detail::impl_of(t);
  if (!impl || impl->kind != ImplKind::Undefined || !impl->typed_undefined) return std::nullopt;
  TensorType type;
  type.dtype = impl->dtype;
  type.shape = impl->shape;
  type.elem_dtype = impl->elem_dtype;
  type.rank_unknown = impl->rank_unknown;
  type.elem_shape_varies = impl->elem_shape_varies;
  return type;
}

namespace {
std::pair<uint32_t, uint32_t> key_of(const Tensor& outer) { return {detail::impl_of(outer)->node, detail::impl_of(outer)->output}; }
}  // namespace

std::vector<Tensor> union_captures(std::initializer_list<const TraceFrame*> frames) {
  std::vector<Tensor> out;
  std::map<std::pair<uint32_t, uint32_t>, size_t> seen;
  for (const TraceFrame* f : frames)
    for (const Capture& c : f->captures())
      if (seen.emplace(key_of(c.outer), out.size()).second) out.push_back(c.outer);
  return out;
}

void align_params(TraceFrame& frame, size_t explicit_params, const std::vector<Tensor>& operands) {
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> captured;
  for (const Capture& c : frame.captures()) captured[key_of(c.outer)] = c.param;
  Graph& g = frame.graph;
  std::vector<uint32_t> params(g.params.begin(), g.params.begin() + static_cast<long>(explicit_params));
  for (const Tensor& op : operands) {
    auto it = captured.find(key_of(op));
    if (it != captured.end()) {
      params.push_back(it->second);
    } else {
      ValueId v = g.add({OpKind::Placeholder, {}, {type_of(op)}, {}, {}, frame.loc});
      g.nodes[v.node].attrs.strings = {"unused"};
      params.push_back(v.node);
    }
  }
  g.params = std::move(params);
  for (size_t i = 0; i < g.params.size(); ++i) g.nodes[g.params[i]].attrs.param_index() = static_cast<int64_t>(i);
}

}  // namespace ag::detail
