// The gradient of a staged While (data-dependent trip count), in the spirit of TensorFlow's
// while_v2: a While that runs the forward loop again, saving each iteration's loop variables in
// TensorArrays, then a While over the saved iterations, last first, that differentiates one body
// step at a time by replaying it under a tape (replay_gradient), so the backward is staged,
// optimized and compiled with the forward. Memory: the loop variables of every iteration, not
// every intermediate (a body step is recomputed in the backward).
//
// TensorArrays the loop carries are not saved whole: each step is replayed with the final array
// (a write's gradient needs only the array's rows). What the body observes of such an array —
// its reads, stacks and sizes — is saved per iteration by the forward loop and handed back to the
// replay of that step, recorded on the step's tape as the op that observed it (TensorFlow
// accumulates the values its gradient needs in the same way). A loop variable whose shape changes
// from one iteration to the next is saved in an array whose elements may differ in shape.
#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "ag/operators/staging.h"
#include "ag/tensor_array.h"
#include "control_rules.h"

namespace ag::detail {
namespace {

// The body nodes that observe a TensorArray the loop carries (a read, stack or size of it, or of
// what the body's writes make of it), in order. Anything else done with such an array — passing
// it to a nested staged construct or returning it as another loop variable — is not supported.
std::vector<uint32_t> observers_of_carried_arrays(const Graph& body, std::span<const Tensor> loop_vars, SourceLoc loc) {
  std::vector<bool> chain(body.nodes.size(), false);
  for (size_t j = 0; j < loop_vars.size(); ++j)
    if (loop_vars[j].dtype() == DType::List) chain[body.params[j]] = true;
  std::vector<uint32_t> observers;
  for (uint32_t id = 0; id < body.nodes.size(); ++id) {
    const Node& n = body.nodes[id];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (!chain[n.inputs[k].node]) continue;
      const bool list_operand = k == 0 && op_class(n.op) == OpClass::List;
      if (list_operand && n.op == OpKind::ListWrite) chain[id] = true;
      else if (list_operand) observers.push_back(id);
      else
        throw UnimplementedError(fmt::format(
            "the gradient of a staged while loop{} whose body passes a TensorArray it carries to {} is not supported "
            "yet (reading, writing, stacking it and taking its size are)",
            at(loc), user_op_name(n.op)));
    }
  }
  for (size_t r = 0; r < body.results.size(); ++r)
    if (chain[body.results[r].node] && (r >= loop_vars.size() || loop_vars[r].dtype() != DType::List ||
                                        !chain[body.params[r]]))
      throw UnimplementedError(fmt::format(
          "the gradient of a staged while loop{} whose body makes one TensorArray loop variable from another is not "
          "supported yet",
          at(loc)));
  return observers;
}

// An empty array to save the values of `type` in, one per iteration: elements may differ in
// shape when the type has unknown dims (a loop variable whose shape changes).
Tensor saving_array(const TensorType& type) {
  const bool any_shape = std::any_of(type.shape.begin(), type.shape.end(), [](int64_t d) { return d < 0; });
  return TensorArray(type.dtype, 0, /*dynamic_size=*/true, /*infer_shape=*/!any_shape).handle();
}

Tensor read_saved(const Tensor& array, const Tensor& k) { return TensorArray::from_handle(array, type_of(array).elem_dtype).read(k); }
Tensor save(const Tensor& array, const Tensor& k, const Tensor& value) {
  return TensorArray::from_handle(array, value.dtype()).write(k, value).handle();
}

}  // namespace

std::vector<Tensor> while_gradient(const GradContext& c) {
  const Graph& cond = *c.subgraphs[0];
  const Graph& body = *c.subgraphs[1];
  const size_t n = static_cast<size_t>(c.attrs.loop_vars());
  const std::span<const Tensor> loop_vars = c.inputs.subspan(0, n);
  const std::vector<Tensor> invariants(c.inputs.begin() + static_cast<std::ptrdiff_t>(n), c.inputs.end());
  const std::vector<uint32_t> observers = observers_of_carried_arrays(body, loop_vars, c.loc);
  const size_t m = observers.size();
  auto with_invariants = [&](std::span<const Tensor> vars) {
    std::vector<Tensor> xs(vars.begin(), vars.end());
    xs.insert(xs.end(), invariants.begin(), invariants.end());
    return xs;
  };
  auto observer_index = [&](uint32_t id) {
    return static_cast<size_t>(std::find(observers.begin(), observers.end(), id) - observers.begin());
  };

  // 1. The forward loop again: [loop vars (n), their saved values (n; arrays: unused), what the
  // body observes of carried arrays (m), k].
  std::vector<Tensor> fwd(loop_vars.begin(), loop_vars.end());
  for (size_t j = 0; j < n; ++j)
    fwd.push_back(loop_vars[j].dtype() == DType::List ? loop_vars[j] : saving_array(body.nodes[body.params[j]].outputs[0]));
  for (uint32_t id : observers) fwd.push_back(saving_array(body.nodes[id].outputs[0]));
  fwd.push_back(Tensor(int32_t{0}));
  const size_t k_at = 2 * n + m;
  auto fwd_cond = [&]() -> Tensor {
    std::vector<Tensor> out(1);
    replay_graph(cond, with_invariants({fwd.data(), n}), out);
    return out[0];
  };
  auto fwd_body = [&] {
    const Tensor k = fwd[k_at];
    for (size_t j = 0; j < n; ++j)
      if (loop_vars[j].dtype() != DType::List) fwd[n + j] = save(fwd[n + j], k, fwd[j]);
    ReplayHooks hooks;
    hooks.after = [&](uint32_t id, std::span<const Tensor> out) {
      if (const size_t i = observer_index(id); i < m) fwd[2 * n + i] = save(fwd[2 * n + i], k, out[0]);
    };
    std::vector<Tensor> next(n);
    replay_graph(body, with_invariants({fwd.data(), n}), next, m ? &hooks : nullptr);
    for (size_t j = 0; j < n; ++j) fwd[j] = next[j];
    fwd[k_at] = k + 1;
  };
  std::vector<StateVar> fwd_vars;
  append_state_vars(fwd_vars, fwd, "the loop's state (for its gradient)");
  staged_while(fwd_cond, fwd_body, fwd_vars, c.loc, "while loop (forward, for its gradient)");

  // 2. The body steps backwards: [d loop vars (floating), d invariants (floating), d Variables, k].
  const std::vector<size_t> wrt = floating_positions(c.inputs);  // loop vars first, then invariants
  const auto variables = variables_of(std::span(c.subgraphs).subspan(1));
  std::vector<Tensor> bwd;
  for (size_t p : wrt) bwd.push_back(p < n ? c.dys[p] : zero_gradient(c.inputs[p]));
  for (const auto& v : variables) bwd.push_back(zeros(v->shape, v->dtype));
  bwd.push_back(fwd[k_at] - 1);
  auto bwd_cond = [&]() -> Tensor { return bwd.back() >= 0; };
  auto bwd_body = [&] {
    const Tensor k = bwd.back();
    std::vector<Tensor> step(n);
    for (size_t j = 0; j < n; ++j) step[j] = loop_vars[j].dtype() == DType::List ? fwd[j] : read_saved(fwd[n + j], k);
    // What the body observed of a carried array at step k, recorded as the observing op.
    ReplayHooks hooks;
    hooks.replace = [&](uint32_t id, const Node& node, std::span<const Tensor> in, std::vector<Tensor>& out) {
      const size_t i = observer_index(id);
      if (i == m) return false;
      out = {read_saved(fwd[2 * n + i], k)};
      tape_record(node.op, in, node.attrs, node.loc, out);
      return true;
    };
    std::vector<Tensor> dys(n);
    for (size_t i = 0; i < wrt.size() && wrt[i] < n; ++i) dys[wrt[i]] = bwd[i];
    const std::vector<Tensor> g = replay_gradient(body, with_invariants(step), dys, wrt, variables, nullptr, m ? &hooks : nullptr);
    for (size_t i = 0; i < wrt.size(); ++i) bwd[i] = wrt[i] < n ? g[i] : bwd[i] + g[i];  // invariants accumulate
    for (size_t i = wrt.size(); i < wrt.size() + variables.size(); ++i) bwd[i] = bwd[i] + g[i];
    bwd.back() = k - 1;
  };
  std::vector<StateVar> bwd_vars;
  append_state_vars(bwd_vars, bwd, "the loop's gradient");
  staged_while(bwd_cond, bwd_body, bwd_vars, c.loc, "while loop (gradient)");

  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < wrt.size(); ++i) result[wrt[i]] = bwd[i];
  return connected_only(c, std::move(result), variables, std::span(bwd).subspan(wrt.size(), variables.size()));
}

}  // namespace ag::detail
