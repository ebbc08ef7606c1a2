// Constant folding with the eager kernels, and shapes known statically (ShapeOf). A folded value
// whose elements are all equal stays a Fill of one scalar constant.
#include <cstring>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

constexpr int64_t kFoldLimit = 1 << 16;  // larger results stay ops: constants bloat graphs and caches

// A constant operand: a Const, or a Fill of one (what a folded uniform value becomes, below).
bool is_constant(const Graph& g, ValueId v) {
  const Node& n = g.nodes[v.node];
  return detail::is_const(g, v) || (n.op == OpKind::Fill && detail::is_const(g, n.inputs[0]) &&
                                     n.outputs[0].shape.num_elements() <= kFoldLimit);
}

Tensor constant_value(const Graph& g, ValueId v) {
  const Node& n = g.nodes[v.node];
  if (n.op != OpKind::Fill) return detail::const_value(g, v);
  const Tensor scalar = detail::const_value(g, n.inputs[0]);
  return detail::eval_op(OpKind::Fill, {&scalar, 1}, n.attrs, n.loc);
}

// Whether every element of `t` (more than one) has the first one's bytes.
bool is_uniform(const Tensor& t) {
  const int64_t n = t.num_elements();
  if (n < 2 || t.dtype() == DType::List) return false;
  const size_t size = dtype_size(t.dtype());
  const auto* bytes = static_cast<const unsigned char*>(detail::impl_of(t)->data);
  for (int64_t i = 1; i < n; ++i)
    if (std::memcmp(bytes, bytes + static_cast<size_t>(i) * size, size) != 0) return false;
  return true;
}

bool foldable(const Graph& g, const Node& n) {
  if (n.op == OpKind::Const || n.op == OpKind::Placeholder || op_info(n.op).stateful) return false;
  if (n.attrs.callback) return false;  // a pure callback still runs on every call, not once while compiling
  switch (op_class(n.op)) {
    case OpClass::Control:
    case OpClass::List: return false;  // lists are mutable handles
    default: break;
  }
  if (n.outputs.size() != 1) return false;
  if (n.outputs[0].rank_unknown) return false;
  const int64_t size = n.outputs[0].shape.num_elements();
  if (size > kFoldLimit || (size < 0 && n.op != OpKind::Range)) return false;
  for (ValueId v : n.inputs)
    if (!is_constant(g, v)) return false;
  return true;
}

}  // namespace

Graph fold_constants(const Graph& g) {
  return detail::rebuild(g, [](detail::GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (!n.subgraphs.empty()) {
      rb.emit(id, detail::with_transformed_subgraphs(std::move(n), &fold_constants));
      return;
    }
    auto emit_const = [&](Tensor value) {
      Node c;
      c.op = OpKind::Const;
      c.outputs = {detail::type_of(value)};
      c.attrs.value = std::move(value);
      c.loc = n.loc;
      rb.emit(id, std::move(c));
    };
    auto emit_uniform = [&](const Tensor& value) {
      Tensor first = zeros(Shape{}, value.dtype());
      std::memcpy(detail::impl_of(first)->data, detail::impl_of(value)->data, dtype_size(value.dtype()));
      rb.emit(id, detail::fill_of_constant(rb.out(), std::move(first), detail::type_of(value), n.loc));
    };
    // The shape of a statically shaped value is a constant, whatever the value.
    if (n.op == OpKind::ShapeOf) {
      const TensorType& t = rb.out().type(n.inputs[0]);
      const Shape& s = t.shape;
      if (t.dtype != DType::List && !t.rank_unknown && s.is_fully_defined()) {
        emit_const(constant(std::vector<int64_t>(s.begin(), s.end()), Shape{s.rank()}));
        return;
      }
    }
    if (foldable(rb.out(), n)) {
      std::vector<Tensor> in;
      for (ValueId v : n.inputs) in.push_back(constant_value(rb.out(), v));
      try {
        Tensor value = detail::eval_op(n.op, in, n.attrs, n.loc);
        if (is_uniform(value)) {
          // A Fill of its one value, not a dense constant: the JIT evaluates a fill in the loop
          // that reads it (reading nothing), where a constant is a buffer to read (the gradient
          // of a mean, 1/N in every element of the batch's shape).
          emit_uniform(value);
          return;
        }
        if (value.num_elements() <= kFoldLimit) {
          emit_const(std::move(value));
          return;
        }
      } catch (const Error&) {
        // Non-strict: the error is raised only if this node ever runs.
      }
    }
    rb.emit(id, std::move(n));
  });
}

}  // namespace ag
