// insert_numeric_checks: the graph a Function runs while enable_check_numerics() is on. Each
// checked result is read through a CheckNumerics node that names the op and carries its line;
// the JIT fuses the checks into the loops that compute the values (docs/debugging.md).
#include "ag/detail/check_numerics.h"
#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {

Graph insert_numeric_checks(const Graph& g) {
  return detail::rebuild(g, [](detail::GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (!n.subgraphs.empty()) n = detail::with_transformed_subgraphs(std::move(n), &insert_numeric_checks);
    const bool checked = n.outputs.size() == 1 && detail::checks_numerics_of(n.op, n.outputs[0].dtype);
    Node check;
    if (checked) {
      check.op = OpKind::CheckNumerics;
      check.outputs = n.outputs;
      check.attrs = detail::check_numerics_attrs({}, detail::user_op_name(n.op));
      check.loc = n.loc;
    }
    rb.emit(id, std::move(n));
    if (!checked) return;
    check.inputs = {rb.map({id, 0})};
    rb.alias(id, {rb.out().add(std::move(check))});
  });
}

}  // namespace ag
