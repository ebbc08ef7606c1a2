// Which staged while loops run element by element, and their scalar sub-graphs
// (per_element_loops.h).
//
// A While of loop variables of one static shape S (its "elements") and scalars (counters)
// qualifies when:
//  - its invariants are scalars or broadcast to S;
//  - every node of its cond and body is an elementwise op that cannot raise, a fill, or a scalar
//    constant (no reductions, no state, no nested control flow), and its cond is
//    `reduce_any(m)` over all of S, alone or and'ed with scalars, of a mask m of shape S that is
//    a bool loop variable or an expression of the element variables and the invariants
//    (`reduce_any(abs(z) < 2)`: no scalar loop variable, which could revive a finished element);
//  - when m is false, the body returns every element variable unchanged: evaluated symbolically
//    with m = false (the mask variable, or each body value computed as the cond computes m;
//    where(false, a, b) = b, false & x = false, cast(false) = 0, x + 0 = x for integers and for
//    floats that are never -0.0, 0 * x = 0 for integers, ...), each of its results is the
//    variable it replaces (m's own may be `false`).
// Then, by induction over the iterations, the global loop and the loop of each element alone
// give every element the same final state: an element whose m is false stays as it is (the
// proof) and keeps m false (a mask variable the body keeps false; an expression of values that
// did not change), so the global loop running on changes nothing of it; while m[e] is
// true both run the same elementwise step on it; the scalars are the same sequence in both (a
// scalar computed by elementwise ops reads only scalars); and the global loop stops when no
// element is active or a scalar condition fails, the same condition each element stops on. The
// counters after the loop are those of the element that ran longest (the global loop's count).
// Ops that may raise are excluded: the global loop runs them on inactive elements too.
#include "per_element_loops.h"

#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "ag/detail/tensor_impl.h"
#include "ag/graph/passes.h"

namespace ag::jit {
namespace {

bool broadcasts_to(const Shape& s, const Shape& target) {
  if (!s.is_fully_defined() || s.rank() > target.rank()) return false;
  for (int64_t d = 1; d <= s.rank(); ++d)
    if (s[s.rank() - d] != 1 && s[s.rank() - d] != target[target.rank() - d]) return false;
  return true;
}

bool is_negative_zero(double v) { return v == 0 && std::signbit(v); }

// Whether a float constant has a -0.0 element (other float types: assumed to).
bool has_negative_zero(const Tensor& t) {
  auto any = [](const auto& values) {
    for (auto v : values)
      if (is_negative_zero(static_cast<double>(v))) return true;
    return false;
  };
  if (t.dtype() == DType::Float32) return any(t.to_vector<float>());
  if (t.dtype() == DType::Float64) return any(t.to_vector<double>());
  return is_floating(t.dtype());
}

// A node the scalar sub-graphs can hold: evaluated per element, the same as on the whole.
bool per_element_op(const Graph& g, const Node& n) {
  if (n.op == OpKind::Placeholder) return true;
  if (n.op == OpKind::Const) return n.outputs[0].shape.rank() == 0 && n.outputs[0].dtype != DType::List;
  const bool elementwise = is_elementwise(n.op) || n.op == OpKind::Fill || n.op == OpKind::FillLike;
  if (!elementwise || may_raise(g, n) || has_side_effects(n) || !n.subgraphs.empty()) return false;
  return n.outputs.size() == 1;
}

// The facts about a While the rules need.
struct Loop {
  const Graph& outer;
  const Node& node;
  Shape shape;       // S
  int64_t nvars = 0;
  int64_t mask = -1;       // m's loop variable, or -1 when the cond computes m
  std::string mask_expr;   // ...then m's expression (ExpressionKeys), which the body may repeat
  ValueId any{};           // reduce_any(m) in the cond
  bool element_var(size_t k) const { return node.outputs[k].shape.rank() != 0; }
};

// A key per value of a sub-graph that is equal for two values (of the cond and the body, whose
// parameters are the same loop variables and invariants) when they compute the same expression
// of the same parameters: op, attributes, output types and the inputs' keys.
class ExpressionKeys {
 public:
  explicit ExpressionKeys(const Graph& g) : g_(g), keys_(g.nodes.size()) {}

  const std::string& of(ValueId v) {
    std::string& key = keys_[v.node];
    if (!key.empty()) return key;
    const Node& n = g_.nodes[v.node];
    if (n.op == OpKind::Placeholder) return key = fmt::format("p{}", n.attrs.param_index());
    const Attrs& a = n.attrs;
    key = fmt::format("({} {} {} {} {} {} {}", static_cast<int>(n.op), n.outputs[0].str(), static_cast<int>(a.dtype), a.scalar,
                      a.scalar2, a.axis, a.ints.str());
    if (n.op == OpKind::Const) {  // a scalar (per_element_op): its bytes, exactly
      const auto* bytes = static_cast<const unsigned char*>(detail::impl_of(a.value)->data);
      key += " c";
      for (size_t b = 0; b < dtype_size(a.value.dtype()); ++b) key += fmt::format("{:02x}", bytes[b]);
    }
    for (ValueId in : n.inputs) key += " " + of(in);
    return key += ")";
  }

 private:
  const Graph& g_;
  std::vector<std::string> keys_;
};

// Whether `v` of the cond reads a scalar loop variable.
bool reads_scalar_var(const Loop& loop, const Graph& c, ValueId v) {
  const Node& n = c.nodes[v.node];
  if (n.op == OpKind::Placeholder) {
    const int64_t k = n.attrs.param_index();
    return k < loop.nvars && !loop.element_var(static_cast<size_t>(k));
  }
  for (ValueId in : n.inputs)
    if (reads_scalar_var(loop, c, in)) return true;
  return false;
}

// The cond: reduce_any of a mask over all of S (a bool element variable, or an expression of
// element variables and invariants), alone or under LogicalAnds with scalars.
bool find_mask(Loop& loop) {
  const Graph& c = *loop.node.subgraphs[0];
  for (uint32_t i = 0; i < c.nodes.size(); ++i) {
    const Node& n = c.nodes[i];
    if (n.op != OpKind::ReduceAny) continue;
    if (loop.mask >= 0 || n.attrs.keepdims || n.attrs.axes().rank() != loop.shape.rank()) return false;
    const ValueId m = n.inputs[0];
    if (c.type(m).dtype != DType::Bool || c.type(m).shape != loop.shape) return false;
    if (c.nodes[m.node].op == OpKind::Placeholder) {
      const int64_t k = c.nodes[m.node].attrs.param_index();
      if (k >= loop.nvars || !loop.element_var(static_cast<size_t>(k))) return false;
      loop.mask = k;
    } else {
      if (reads_scalar_var(loop, c, m)) return false;
      loop.mask_expr = ExpressionKeys(c).of(m);
    }
    loop.any = {i, 0};
  }
  if (loop.mask < 0 && loop.mask_expr.empty()) return false;
  // The cond's result is reduce_any(m), or LogicalAnds down to it along one path: each And's
  // other operand does not read it (reduce_any(m) read twice is not a per-element condition).
  const auto reaches_any = [&](ValueId from) {
    std::vector<ValueId> stack{from};
    while (!stack.empty()) {
      const ValueId x = stack.back();
      stack.pop_back();
      if (x.node == loop.any.node) return true;
      for (ValueId in : c.nodes[x.node].inputs) stack.push_back(in);
    }
    return false;
  };
  for (ValueId v = c.results[0]; v.node != loop.any.node;) {
    const Node& n = c.nodes[v.node];
    if (n.op != OpKind::LogicalAnd) return false;
    const bool in0 = reaches_any(n.inputs[0]), in1 = reaches_any(n.inputs[1]);
    if (in0 == in1) return false;
    v = in0 ? n.inputs[0] : n.inputs[1];
  }
  return true;
}

// Float values of a graph that are never -0.0, given the parameters in `never` are not (the
// body's loop variables; none of the outer graph's). x + y is -0.0 only when both are; x - y
// only when x is.
class NegativeZeros {
 public:
  NegativeZeros(const Graph& g, const std::vector<bool>& never) : g_(g), never_(never) {}

  bool never(ValueId v) const {
    if (!is_floating(g_.type(v).dtype)) return true;
    const Node& n = g_.nodes[v.node];
    switch (n.op) {
      case OpKind::Placeholder: {
        const auto k = static_cast<size_t>(n.attrs.param_index());
        return k < never_.size() && never_[k];
      }
      case OpKind::Cast: return !is_floating(g_.type(n.inputs[0]).dtype);
      case OpKind::Const: return !has_negative_zero(n.attrs.value);
      case OpKind::Fill: return never(n.inputs[0]);  // its value is its input (FillLike's an attribute)
      case OpKind::FillLike: return !is_negative_zero(n.attrs.scalar);
      case OpKind::Abs: return true;
      case OpKind::Add: return never(n.inputs[0]) || never(n.inputs[1]);
      case OpKind::Sub: return never(n.inputs[0]);
      case OpKind::Select: return never(n.inputs[1]) && never(n.inputs[2]);
      case OpKind::Identity:
      case OpKind::StopGradient: return never(n.inputs[0]);
      default: return false;
    }
  }

 private:
  const Graph& g_;
  const std::vector<bool>& never_;
};

// The body's values with m = false, as far as the rules below know them.
struct Sym {
  enum class Kind : uint8_t { Opaque, Param, False, True, Zero } kind = Kind::Opaque;
  int64_t param = -1;
  friend bool operator==(const Sym& a, const Sym& b) { return a.kind == b.kind && a.param == b.param; }
};

std::vector<Sym> evaluate_inactive(const Graph& body, const Loop& loop, const NegativeZeros& zeros) {
  using K = Sym::Kind;
  const int64_t mask = loop.mask;
  std::vector<Sym> sym(body.nodes.size());
  ExpressionKeys keys(body);
  for (uint32_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    auto in = [&](size_t k) { return sym[n.inputs[k].node]; };
    Sym& out = sym[i];
    if (!loop.mask_expr.empty() && n.outputs.size() == 1 && keys.of({i, 0}) == loop.mask_expr) {
      out = {K::False};
      continue;
    }
    switch (n.op) {
      case OpKind::Placeholder:
        out = n.attrs.param_index() == mask ? Sym{K::False} : Sym{K::Param, n.attrs.param_index()};
        break;
      case OpKind::Identity:
      case OpKind::StopGradient: out = in(0); break;
      case OpKind::Select:
        if (in(0).kind == K::False) out = in(2);
        if (in(0).kind == K::True) out = in(1);
        break;
      case OpKind::LogicalAnd:
        if (in(0).kind == K::False || in(1).kind == K::False) out = {K::False};
        else if (in(0).kind == K::True) out = in(1);
        else if (in(1).kind == K::True) out = in(0);
        break;
      case OpKind::LogicalOr:
        if (in(0).kind == K::True || in(1).kind == K::True) out = {K::True};
        else if (in(0).kind == K::False) out = in(1);
        else if (in(1).kind == K::False) out = in(0);
        break;
      case OpKind::LogicalNot:
        if (in(0).kind == K::False) out = {K::True};
        if (in(0).kind == K::True) out = {K::False};
        break;
      case OpKind::Cast:
        if (in(0).kind == K::False || in(0).kind == K::Zero) out = n.attrs.dtype == DType::Bool ? Sym{K::False} : Sym{K::Zero};
        break;
      case OpKind::Add:
      case OpKind::Sub:
        // x + 0 and x - 0 (0 = +0.0 for floats): x, except -0.0 + +0.0 = +0.0.
        for (size_t k : {size_t{1}, size_t{0}}) {
          if (k == 0 && n.op == OpKind::Sub) continue;
          const ValueId x = n.inputs[1 - k];
          if (in(k).kind == K::Zero && (n.op == OpKind::Sub || zeros.never(x))) out = sym[x.node];
        }
        break;
      case OpKind::Mul:  // 0 * x = 0 for integers (for floats it is -0.0 or NaN for some x)
        if (!is_floating(n.outputs[0].dtype) && (in(0).kind == K::Zero || in(1).kind == K::Zero)) out = {K::Zero};
        break;
      default: break;
    }
  }
  return sym;
}

// The rules of the file's comment; true when `loop` runs element by element.
bool qualifies(Loop& loop) {
  const Node& w = loop.node;
  for (size_t k = 0; k < w.inputs.size(); ++k) {
    const TensorType& t = loop.outer.type(w.inputs[k]);
    if (t.dtype == DType::List || t.rank_unknown || !t.shape.is_fully_defined()) return false;
    if (static_cast<int64_t>(k) < loop.nvars) {
      if (!(t == w.outputs[k])) return false;
      if (t.shape.rank() != 0 && t.shape != loop.shape) return false;
    } else if (!broadcasts_to(t.shape, loop.shape)) {
      return false;
    }
  }
  for (const auto& sub : w.subgraphs)
    for (const Node& n : sub->nodes) {
      if (n.op == OpKind::ReduceAny && sub == w.subgraphs[0]) continue;
      if (!per_element_op(*sub, n)) return false;
      for (const TensorType& t : n.outputs)
        if (!broadcasts_to(t.shape, loop.shape) || t.rank_unknown) return false;
    }
  if (!find_mask(loop)) return false;
  // Which float loop variables are never -0.0: those whose initial value is not and whose update
  // is not while they are not (a fixed point, from all of them down).
  const Graph& body = *w.subgraphs[1];
  std::vector<bool> never(static_cast<size_t>(loop.nvars));
  const std::vector<bool> no_params;  // the outer graph's parameters may be -0.0
  for (size_t k = 0; k < never.size(); ++k) never[k] = NegativeZeros(loop.outer, no_params).never(w.inputs[k]);
  for (bool changed = true; changed;) {
    changed = false;
    const NegativeZeros zeros(body, never);
    for (size_t k = 0; k < never.size(); ++k)
      if (never[k] && !zeros.never(body.results[k])) never[k] = false, changed = true;
  }
  const NegativeZeros zeros(body, never);
  const std::vector<Sym> sym = evaluate_inactive(body, loop, zeros);
  for (size_t k = 0; k < static_cast<size_t>(loop.nvars); ++k) {
    if (!loop.element_var(k)) continue;
    const Sym r = sym[body.results[k].node];
    const bool unchanged = r == Sym{Sym::Kind::Param, static_cast<int64_t>(k)} ||
                           (static_cast<int64_t>(k) == loop.mask && r.kind == Sym::Kind::False);
    if (!unchanged) return false;
  }
  return true;
}

// `sub` with every value one element (the cond's reduce_any(m) is m's element).
std::shared_ptr<const Graph> scalar_graph(const Graph& sub, std::optional<ValueId> any) {
  auto out = std::make_shared<Graph>();
  out->name = sub.name;
  std::vector<ValueId> map(sub.nodes.size());
  auto mapped = [&](ValueId v) { return ValueId{map[v.node].node, map[v.node].index + v.index}; };
  for (uint32_t i = 0; i < sub.nodes.size(); ++i) {
    const Node& n = sub.nodes[i];
    if (any && i == any->node) {
      map[i] = mapped(n.inputs[0]);
      continue;
    }
    if (n.op == OpKind::Placeholder) {
      TensorType t = n.outputs[0];
      t.shape = Shape{};
      map[i] = out->add_param(std::move(t), n.loc);
      continue;
    }
    Node c = n;
    for (ValueId& v : c.inputs) v = mapped(v);
    for (TensorType& t : c.outputs) t.shape = Shape{};
    if (c.op == OpKind::Fill) c.attrs.shape = Shape{};
    map[i] = out->add(std::move(c));
  }
  for (ValueId r : sub.results) out->results.push_back(mapped(r));
  return out;
}

std::optional<Graph> transform(const Graph& g) {
  std::optional<Graph> out;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::vector<std::shared_ptr<const Graph>> subs = n.subgraphs;
    bool changed = false;
    for (auto& sub : subs)
      if (std::optional<Graph> t = transform(*sub)) sub = std::make_shared<const Graph>(std::move(*t)), changed = true;
    bool per_element = false;
    if (n.op == OpKind::While && !changed) {
      Loop loop{.outer = g, .node = n, .shape = Shape{}, .nvars = n.attrs.loop_vars(), .mask = -1, .mask_expr = {}, .any = {}};
      for (int64_t k = 0; k < loop.nvars; ++k)
        if (n.outputs[static_cast<size_t>(k)].shape.rank() != 0) {
          loop.shape = n.outputs[static_cast<size_t>(k)].shape;
          break;
        }
      if (loop.shape.rank() > 0 && loop.shape.num_elements() > 1 && qualifies(loop)) {
        subs = {scalar_graph(*n.subgraphs[0], loop.any), scalar_graph(*n.subgraphs[1], std::nullopt)};
        per_element = changed = true;
      }
    }
    if (!changed) continue;
    if (!out) out = g;
    Node& m = out->nodes[i];
    m.subgraphs = std::move(subs);
    if (per_element) m.attrs.per_element() = true;
  }
  return out;
}

}  // namespace

std::shared_ptr<const Graph> run_loops_per_element(std::shared_ptr<const Graph> g) {
  if (std::optional<Graph> t = transform(*g)) return std::make_shared<const Graph>(std::move(*t));
  return g;
}

}  // namespace ag::jit
