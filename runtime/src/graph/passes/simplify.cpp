// Algebraic simplification. Every rewrite is exact (bit-for-bit): x+0 is folded only for
// integers (for floats -0.0 + 0 is +0.0), and only when the result type is x's own type.
#include <optional>

#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

using detail::const_all_equal;
using detail::GraphRebuilder;

// Whether reshape `n` keeps its input's dims whatever the unknown one is: `[?, 2] -> [-1, 2]`
// (what unsorted_segment_sum makes of its updates), the known dims equal and non-zero (so the -1
// is inferred, as eager code infers it), at most one unknown.
bool reshape_keeps_dims(const TensorType& in, const Node& n) {
  const Shape& target = n.attrs.shape;
  if (in.rank_unknown || n.outputs[0].rank_unknown || !(n.outputs[0] == in) || in.shape.rank() != target.rank()) return false;
  int64_t unknown = 0;
  for (int64_t d = 0; d < target.rank(); ++d) {
    if (target[d] == -1) {
      ++unknown;
      continue;
    }
    if (target[d] <= 0 || in.shape[d] != target[d]) return false;
  }
  return unknown <= 1;
}

// The value that node `id` reduces to, if it is an identity of one of its inputs.
std::optional<ValueId> identity_of(const Graph& g, const Node& n) {
  auto same_type = [&](ValueId v) { return g.type(v) == n.outputs[0] && n.outputs[0].shape.is_fully_defined(); };
  auto operand_if = [&](size_t keep, size_t other, double neutral) -> std::optional<ValueId> {
    // (Two unknown-rank types are equal without being the same shape: a scalar neutral keeps it.)
    const TensorType& neutral_type = g.type(n.inputs[other]);
    if (n.outputs[0].rank_unknown && (neutral_type.rank_unknown || neutral_type.shape.rank() != 0)) return std::nullopt;
    if (const_all_equal(g, n.inputs[other], neutral) && g.type(n.inputs[keep]) == n.outputs[0]) return n.inputs[keep];
    return std::nullopt;
  };
  switch (n.op) {
    case OpKind::Identity: return n.inputs[0];
    case OpKind::Reshape:
      if (same_type(n.inputs[0]) || reshape_keeps_dims(g.type(n.inputs[0]), n)) return n.inputs[0];
      break;
    case OpKind::ExpandDims:
    case OpKind::Squeeze:
      if (same_type(n.inputs[0])) return n.inputs[0];
      break;
    case OpKind::Transpose: {
      bool identity = true;
      for (int64_t i = 0; i < n.attrs.perm().rank(); ++i) identity &= n.attrs.perm()[i] == i;
      if (identity) return n.inputs[0];
      break;
    }
    case OpKind::Neg:
    case OpKind::LogicalNot: {
      const Node& in = g.producer(n.inputs[0]);
      if (in.op == n.op) return in.inputs[0];
      break;
    }
    case OpKind::Add:
      if (is_integer(n.outputs[0].dtype)) {
        if (auto v = operand_if(0, 1, 0)) return v;
        if (auto v = operand_if(1, 0, 0)) return v;
      }
      break;
    case OpKind::Sub:
      if (auto v = operand_if(0, 1, 0)) return v;
      // (a + c) - c == a exactly for integers (wrapping arithmetic); not for floats (rounding).
      if (is_integer(n.outputs[0].dtype)) {
        const Node& lhs = g.producer(n.inputs[0]);
        if (lhs.op == OpKind::Add && g.type(lhs.inputs[0]) == n.outputs[0]) {
          if (lhs.inputs[1] == n.inputs[1]) return lhs.inputs[0];  // CSE has merged equal constants
        }
      }
      break;
    case OpKind::FloorDiv:
      if (is_integer(n.outputs[0].dtype)) return operand_if(0, 1, 1);
      break;
    case OpKind::Mul:
      if (auto v = operand_if(0, 1, 1)) return v;
      return operand_if(1, 0, 1);
    case OpKind::Div: return operand_if(0, 1, 1);
    case OpKind::Select:
      if (const_all_equal(g, n.inputs[0], 1) && g.type(n.inputs[1]) == n.outputs[0]) return n.inputs[1];
      if (const_all_equal(g, n.inputs[0], 0) && g.type(n.inputs[2]) == n.outputs[0]) return n.inputs[2];
      break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace

Graph simplify_algebra(const Graph& g) {
  return detail::rebuild(g, [](GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    const Graph& out = rb.out();
    if (n.op == OpKind::If && detail::is_const(out, n.inputs[0])) {
      const bool taken = detail::element_as_double(detail::const_value(out, n.inputs[0]), 0) != 0;
      std::vector<ValueId> args(n.inputs.begin() + 1, n.inputs.end());
      rb.alias(id, rb.inline_graph(*n.subgraphs[taken ? 0 : 1], args));
      return;
    }
    // An assert whose condition folded to all-true can never fail (with no elements it is kept:
    // const_all_equal is false for those, and they cannot fail either way).
    if (n.op == OpKind::Assert && const_all_equal(out, n.inputs[0], 1)) return;
    if (!n.subgraphs.empty()) {
      rb.emit(id, detail::with_transformed_subgraphs(std::move(n), &simplify_algebra));
      return;
    }
    if (auto v = identity_of(out, n)) {
      rb.alias(id, {*v});
      return;
    }
    // zeros_like/ones_like of a value whose shape is static reads nothing of it: a Fill of a
    // constant, so the value (a gradient's forward loss, read only for its shape) can be pruned.
    if (n.op == OpKind::FillLike && !n.outputs[0].rank_unknown && n.outputs[0].shape.is_fully_defined() &&
        n.outputs[0].dtype != DType::List) {
      const TensorType& t = n.outputs[0];
      rb.emit(id, detail::fill_of_constant(rb.out(), Tensor::make_scalar(t.dtype, n.attrs.scalar, static_cast<int64_t>(n.attrs.scalar)),
                                           t, n.loc));
      return;
    }
    rb.emit(id, std::move(n));
  });
}

}  // namespace ag
