// strip_custom_gradients: an ag::custom_gradient node gives back its forward values (its inputs
// after the call's tensors); its gradient sub-graph matters only to gradients, which replay the
// traced graph.
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {

Graph strip_custom_gradients(const Graph& g) {
  return detail::rebuild(g, [](detail::GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (n.op == OpKind::CustomGradient) {
      const size_t first = static_cast<size_t>(n.attrs.ints[0]);
      rb.alias(id, std::vector<ValueId>(n.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                        n.inputs.begin() + static_cast<std::ptrdiff_t>(first + n.outputs.size())));
      return;
    }
    if (!n.subgraphs.empty()) n = detail::with_transformed_subgraphs(std::move(n), &strip_custom_gradients);
    rb.emit(id, std::move(n));
  });
}

}  // namespace ag
