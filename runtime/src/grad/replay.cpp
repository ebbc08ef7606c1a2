// Replaying a graph op by op through apply_op, so that gradient tapes record each op: a Function
// called under an eager tape runs this way (its loops unrolled into the record, its branches the
// ones taken), and a staged If's gradient replays each branch inside the If it builds.
#include "../trace/frame.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "ag/error.h"
#include "rules.h"

namespace ag::detail {
namespace {

bool truth(const Tensor& t) { return element_as_int(t, 0) != 0; }

// One node's outputs from its inputs.
std::vector<Tensor> replay_node(const Node& n, std::span<const Tensor> in) {
  switch (n.op) {
    case OpKind::Const: return {n.attrs.value};
    case OpKind::ReadVariable: {
      const Tensor value = is_tracing() ? trace_op(n.op, {}, n.attrs, n.loc) : n.attrs.variable->read();
      return {tape_variable_read(n.attrs.variable, value)};
    }
    case OpKind::If:
    case OpKind::While: {
      if (is_tracing()) return trace_node(n.op, in, n.attrs, n.outputs, n.subgraphs, n.loc);
      std::vector<Tensor> out(n.outputs.size());
      if (n.op == OpKind::If) {
        replay_graph(*n.subgraphs[truth(in[0]) ? 0 : 1], in.subspan(1), out);
        return out;
      }
      const size_t nvars = static_cast<size_t>(n.attrs.loop_vars());
      std::vector<Tensor> state(in.begin(), in.end()), c(1), next(nvars);
      for (;;) {
        replay_graph(*n.subgraphs[0], state, c);
        if (!truth(c[0])) break;
        replay_graph(*n.subgraphs[1], state, next);
        for (size_t k = 0; k < nvars; ++k) state[k] = std::move(next[k]);
      }
      for (size_t k = 0; k < nvars; ++k) out[k] = std::move(state[k]);
      return out;
    }
    case OpKind::CustomGradient: {
      if (is_tracing()) return trace_node(n.op, in, n.attrs, n.outputs, n.subgraphs, n.loc);  // (recorded)
      // Eagerly: the forward values pass through, and tapes record the node with its gradient.
      const size_t nx = static_cast<size_t>(n.attrs.ints[0]);
      std::vector<Tensor> out;
      for (size_t k = 0; k < n.outputs.size(); ++k) out.push_back(tape_alias(in[nx + k]));
      if (tapes_alive()) tape_record(n.op, in, n.attrs, n.loc, out, n.subgraphs);
      return out;
    }
    case OpKind::Print:
    case OpKind::Assert:
      if (is_tracing()) {
        trace_node(n.op, in, n.attrs, {}, {}, n.loc);
      } else {
        eval_op(n.op, in, n.attrs, n.loc);
      }
      return {};
    default:
      // While tracing, a source or stateful op is traced even from concrete inputs (apply_op
      // would run it now, at trace time).
      if (is_tracing() && (n.inputs.empty() || op_info(n.op).stateful)) {
        Tensor out = trace_op(n.op, in, n.attrs, n.loc);
        // One with a gradient rule (a collective; a callback's, which raises) is on the tapes as
        // apply_op would record it: skipping it would drop the gradient without a word.
        if (!n.inputs.empty() && tapes_alive() && grad_rule(n.op)) tape_record(n.op, in, n.attrs, n.loc, {&out, 1});
        return {out};
      }
      return {apply_op(n.op, in, n.attrs, n.loc)};
  }
}

}  // namespace

void replay_graph(const Graph& g, std::span<const Tensor> inputs, std::span<Tensor> outputs, const ReplayHooks* hooks) {
  if (inputs.size() != g.params.size())
    throw InternalError("replay_graph: " + std::to_string(inputs.size()) + " inputs for " +
                        std::to_string(g.params.size()) + " params");
  CallerLocScope own_lines(SourceLoc{});  // each replayed node keeps its own line
  std::vector<std::vector<Tensor>> values(g.nodes.size());
  for (size_t i = 0; i < g.params.size(); ++i) values[g.params[i]] = {inputs[i]};
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Placeholder) continue;
    std::vector<Tensor> in;
    in.reserve(n.inputs.size());
    for (ValueId v : n.inputs) in.push_back(values[v.node][v.index]);
    if (!hooks || !hooks->replace || !hooks->replace(id, n, in, values[id])) values[id] = replay_node(n, in);
    if (hooks && hooks->after) hooks->after(id, values[id]);
  }
  for (size_t i = 0; i < g.results.size(); ++i) outputs[i] = values[g.results[i].node][g.results[i].index];
}

}  // namespace ag::detail
