// unroll_short_reductions: a sum (or mean) over one short static axis (2 to 4 elements) of an
// elementwise expression made from smaller operands becomes the sum of that expression's slices: `reduce_sum(square(a[:,None,:] -
// b[None,:,:]), 2)` over a last axis of 2 is `square(a0 - b0) + square(a1 - b1)` on [N, K].
// The result is then elementwise itself, so its consumer's loop computes it in registers (an
// argmin finds the nearest centroid without the [N, K] distances ever stored: k-means), where a
// reduction was a loop nest of its own writing its whole result to memory. Each operand of the
// expression is read through a slice (a view: the JIT reads it with strides).
#include <functional>
#include <map>

#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "ag/ops.h"
#include "rebuild.h"

namespace ag {
namespace {

constexpr int64_t kMaxUnrolled = 4;

bool in_expression(OpKind op) {
  return is_elementwise(op) && op != OpKind::Identity && op != OpKind::StopGradient && op != OpKind::FillLike;
}

// The reduced axis when node n is a sum or mean over one static axis of 2..kMaxUnrolled elements
// of an elementwise value, else -1.
int64_t unrollable_axis(const Graph& g, const Node& n) {
  if (n.op != OpKind::ReduceSum && n.op != OpKind::ReduceMean) return -1;
  if (n.attrs.axes().rank() != 1 || !in_expression(g.producer(n.inputs[0]).op)) return -1;
  const TensorType& t = g.type(n.inputs[0]);
  if (t.has_unknown_rank() || t.shape.rank() < 2 || !is_floating(t.dtype)) return -1;
  const int64_t axis = n.attrs.axes()[0];
  const int64_t k = t.shape[static_cast<size_t>(axis)];
  return k >= 2 && k <= kMaxUnrolled ? axis : -1;
}

// Whether `v` is a node of the expression under the reduction: an elementwise node no one else
// reads (the reduction's operand itself always is).
bool in_tree(const Graph& g, const std::vector<int>& uses, const Node& reduce, ValueId v) {
  const Node& n = g.nodes[v.node];
  return v == reduce.inputs[0] || (in_expression(n.op) && uses[v.node] == 1 && n.outputs.size() == 1);
}

// Worth it when the expression makes its elements from smaller operands (broadcasting: k-means'
// [N,1,2] - [1,K,2]): then unrolling saves storing and reading a whole intermediate. An operand
// as large as the expression is read anyway, and reading it by slices would only make the reads
// strided (n-body's [N,N,3] differences, read twice).
bool worth_unrolling(const Graph& g, const std::vector<int>& uses, const Node& reduce, int64_t axis) {
  const Shape& full = g.type(reduce.inputs[0]).shape;
  const int64_t rank = full.rank(), size = full.num_elements();
  std::function<bool(ValueId)> ok = [&](ValueId v) {
    if (in_tree(g, uses, reduce, v)) {
      for (ValueId in : g.nodes[v.node].inputs)
        if (!ok(in)) return false;
      return true;
    }
    if (g.type(v).has_unknown_rank()) return false;
    const Shape& s = g.type(v).shape;
    const int64_t a = axis - (rank - s.rank());
    if (a < 0 || s[static_cast<size_t>(a)] == 1) return true;  // broadcast along the axis
    const int64_t n = s.num_elements();
    return n >= 0 && size >= 0 && n < size;
  };
  return size >= 0 && ok(reduce.inputs[0]);
}

// Emits, for each position j of the reduced axis, the expression with every operand sliced there.
class Unroller {
 public:
  Unroller(detail::GraphRebuilder& rb, const std::vector<int>& uses, const Node& reduce, int64_t axis)
      : rb_(rb), src_(rb.src()), uses_(uses), reduce_(reduce), axis_(axis),
        rank_(src_.type(reduce.inputs[0]).shape.rank()) {}

  ValueId slice_at(ValueId v, int64_t j) {
    auto [it, fresh] = memo_.try_emplace({v, j}, ValueId{});
    if (!fresh) return it->second;
    const Node& n = src_.nodes[v.node];
    ValueId out;
    if (in_tree(src_, uses_, reduce_, v)) {  // a node of the expression: the same op on slices
      std::vector<ValueId> inputs;
      std::vector<TensorType> types;
      for (ValueId in : n.inputs) {
        inputs.push_back(slice_at(in, j));
        types.push_back(rb_.out().type(inputs.back()));
      }
      const TensorType type = detail::infer_type(n.op, types, n.attrs, n.loc);
      out = rb_.out().add(detail::make_node(n.op, inputs, type, n.attrs, n.loc));
    } else {
      out = operand_slice(v, j);
    }
    it->second = out;
    return out;
  }

 private:
  // Operand v's elements at position j of the reduced axis (aligned from the right, as
  // broadcasting aligns it), without that axis.
  ValueId operand_slice(ValueId v, int64_t j) {
    const TensorType& t = src_.type(v);
    const int64_t r = t.shape.rank();
    const int64_t a = axis_ - (rank_ - r);
    const ValueId mapped = rb_.map(v);
    if (a < 0) return mapped;  // a leading axis it broadcasts along: the same value
    ValueId picked = mapped;
    Shape kept;
    for (int64_t d = 0; d < r; ++d)
      if (d != a) kept.push_back(t.shape[static_cast<size_t>(d)]);
    if (t.shape[static_cast<size_t>(a)] != 1) {
      Attrs s;
      std::vector<int64_t> begin(static_cast<size_t>(r), 0), size(t.shape.begin(), t.shape.end());  // -1: to the end
      begin[static_cast<size_t>(a)] = j;
      size[static_cast<size_t>(a)] = 1;
      s.slice_begin() = Shape(begin);
      s.slice_size() = Shape(size);
      Shape one = t.shape;
      one[static_cast<size_t>(a)] = 1;
      picked = rb_.out().add(detail::make_node(OpKind::Slice, {mapped}, {t.dtype, one}, s, reduce_.loc));
    }
    Attrs squeeze;
    squeeze.axes() = Shape{a};
    return rb_.out().add(detail::make_node(OpKind::Squeeze, {picked}, {t.dtype, kept}, squeeze, reduce_.loc));
  }

  detail::GraphRebuilder& rb_;
  const Graph& src_;
  const std::vector<int>& uses_;
  const Node& reduce_;
  const int64_t axis_, rank_;
  std::map<std::pair<ValueId, int64_t>, ValueId> memo_;  // (a value of the source graph, j)
};

}  // namespace

Graph unroll_short_reductions(const Graph& g) {
  std::vector<int> uses(g.nodes.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs) ++uses[v.node];
  for (ValueId v : g.results) ++uses[v.node];
  return detail::rebuild(g, [&](detail::GraphRebuilder& rb, uint32_t id) {
    const Node& src = g.nodes[id];
    const int64_t axis = unrollable_axis(g, src);
    if (axis < 0 || !worth_unrolling(g, uses, src, axis)) {
      Node n = rb.remapped(id);
      if (!n.subgraphs.empty()) n = detail::with_transformed_subgraphs(std::move(n), &unroll_short_reductions);
      rb.emit(id, std::move(n));
      return;
    }
    Unroller unroll(rb, uses, src, axis);
    const int64_t k = g.type(src.inputs[0]).shape[static_cast<size_t>(axis)];
    ValueId sum = unroll.slice_at(src.inputs[0], 0);
    for (int64_t j = 1; j < k; ++j) {
      const ValueId next = unroll.slice_at(src.inputs[0], j);
      sum = rb.out().add(detail::make_node(OpKind::Add, {sum, next}, rb.out().type(sum), Attrs{}, src.loc));
    }
    const TensorType type = rb.out().type(sum);
    if (src.op == OpKind::ReduceMean) {
      Attrs c;
      c.value = ag::cast(Tensor(static_cast<double>(k)), type.dtype);
      const ValueId count = rb.out().add(detail::make_node(OpKind::Const, {}, {type.dtype, Shape{}}, c, src.loc));
      sum = rb.out().add(detail::make_node(OpKind::Div, {sum, count}, type, Attrs{}, src.loc));
    }
    if (src.attrs.keepdims) {
      Attrs e;
      e.axis = axis;
      sum = rb.out().add(detail::make_node(OpKind::ExpandDims, {sum}, src.outputs[0], e, src.loc));
    }
    rb.alias(id, {sum});
  });
}

}  // namespace ag
