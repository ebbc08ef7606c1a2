// Constant folding with the eager kernels, and shapes known statically (ShapeOf).
#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

constexpr int64_t kFoldLimit = 1 << 16;  // larger results stay ops: constants bloat graphs and caches

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
    if (!detail::is_const(g, v)) return false;
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
      for (ValueId v : n.inputs) in.push_back(detail::const_value(rb.out(), v));
      try {
        Tensor value = detail::eval_op(n.op, in, n.attrs, n.loc);
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
