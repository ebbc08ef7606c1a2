// A test mode in which every eager op runs as a one-node graph through the optimizer and the
// interpreter (its inputs as parameters), so the op tests, written eagerly, also check the
// static type rules, the passes and the interpreter against the eager kernels.
#include <atomic>

#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "ag/backend.h"

namespace ag::detail {

std::atomic<bool> g_eager_via_graph{false};
namespace {
std::atomic<int64_t> g_ops_via_graph{0};
}

void set_eager_via_graph(bool on) { g_eager_via_graph.store(on, std::memory_order_relaxed); }
int64_t ops_run_via_graph() { return g_ops_via_graph.load(std::memory_order_relaxed); }

Tensor eval_via_graph(OpKind op, std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc) {
  g_ops_via_graph.fetch_add(1, std::memory_order_relaxed);
  switch (op_class(op)) {
    case OpClass::Stateful:  // side effects and mutable handles are not values of a graph
    case OpClass::List:
    case OpClass::Control: return eval_op(op, in, attrs, loc);
    default: break;
  }
  std::vector<TensorType> types;
  for (const Tensor& t : in) types.push_back(type_of(t));
  if (types.empty() || types[0].dtype == DType::List) return eval_op(op, in, attrs, loc);
  Graph g;
  Node n;
  n.op = op;
  n.attrs = attrs;
  n.loc = loc;
  for (const TensorType& t : types) n.inputs.push_back(g.add_param(t, loc));
  n.outputs = {infer_type(op, types, attrs, loc)};  // the static type rule's errors, as eagerly
  g.results = {g.add(std::move(n))};
  return interpret(optimize(g), in)[0];
}

}  // namespace ag::detail
