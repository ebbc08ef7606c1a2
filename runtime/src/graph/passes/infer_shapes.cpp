// Shape inference: re-derive each node's static type from its (possibly refined) inputs.
#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {

Graph infer_shapes(const Graph& g) {
  return detail::rebuild(g, [](detail::GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (!n.subgraphs.empty()) {
      rb.emit(id, detail::with_transformed_subgraphs(std::move(n), &infer_shapes));
      return;
    }
    if (n.op != OpKind::Print && n.outputs.size() == 1) {
      std::vector<TensorType> in;
      for (ValueId v : n.inputs) in.push_back(rb.out().type(v));
      TensorType t = detail::infer_type(n.op, in, n.attrs, n.loc);
      // Keep what was known before: a refined dim never becomes unknown again.
      if (t.shape.rank() == n.outputs[0].shape.rank())
        for (int64_t i = 0; i < t.shape.rank(); ++i)
          if (t.shape[i] < 0) t.shape[i] = n.outputs[0].shape[i];
      n.outputs[0] = t;
    }
    rb.emit(id, std::move(n));
  });
}

}  // namespace ag
