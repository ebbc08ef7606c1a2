// Gradient rules of the ops that are not arithmetic: none (never called: the tape does not record
// such ops), sources (a Variable read has no inputs), ops whose gradient agc does not compute yet,
// and staged control flow.
//
// A staged If's gradient is an If on the same predicate over the gradients of its branches; a
// staged While's is a While that runs the forward loop again, saving each iteration's loop
// variables in TensorArrays, then a While over the saved iterations, last first, that
// differentiates one body step at a time. Either way a branch or a body step is differentiated by
// replaying its graph under a tape inside the new construct (replay_gradient), so the backward is
// staged, optimized and compiled with the forward. Variables read inside get their gradients too.
// Memory: the loop variables of every iteration (not every intermediate: a body step is
// recomputed in the backward). Sub-graphs with side effects are refused: replaying them would
// repeat their assignments, prints and draws.
#include "rules.h"

#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "ag/operators/staging.h"
#include "ag/tensor_array.h"

namespace ag::detail {

bool has_effects_besides_reads(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (op_info(n.op).stateful && n.op != OpKind::ReadVariable && op_class(n.op) != OpClass::Control) return true;
    for (const auto& sub : n.subgraphs)
      if (has_effects_besides_reads(*sub)) return true;
  }
  return false;
}

namespace {

void refuse_effects(const GradContext& c, const char* what) {
  for (const auto& g : c.subgraphs)
    if (has_effects_besides_reads(*g))
      throw UnimplementedError(fmt::format(
          "the gradient of a staged {}{} whose {} has side effects (variable assignments, prints, asserts, random "
          "draws) is not supported yet: differentiating it would repeat them",
          what, at(c.loc), c.op == OpKind::If ? "branches" : "body"));
}

std::vector<std::shared_ptr<VariableState>> variables_of(std::span<const std::shared_ptr<const Graph>> graphs) {
  std::vector<std::shared_ptr<VariableState>> out;
  for (const auto& g : graphs)
    for (auto& v : variables_read(*g))
      if (std::none_of(out.begin(), out.end(), [&](const auto& w) { return w.get() == v.get(); })) out.push_back(v);
  return out;
}

std::vector<size_t> floating_positions(std::span<const Tensor> xs) {
  std::vector<size_t> out;
  for (size_t k = 0; k < xs.size(); ++k)
    if (carries_gradient(xs[k])) out.push_back(k);
  return out;
}

// Whether the body only writes loop variable `j` (a TensorArray): each use of it, and of what
// writes make of it, is another write or the body's result j. Such an accumulator can be
// replayed with its final handle: a write's gradient needs only the array's rows.
bool only_written(const Graph& body, size_t j) {
  std::vector<bool> chain(body.nodes.size(), false);
  chain[body.params[j]] = true;
  for (uint32_t id = 0; id < body.nodes.size(); ++id) {
    const Node& n = body.nodes[id];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (!chain[n.inputs[k].node]) continue;
      if (n.op != OpKind::ListWrite || k != 0) return false;
      chain[id] = true;
    }
  }
  for (size_t r = 0; r < body.results.size(); ++r)
    if (chain[body.results[r].node] && r != j) return false;
  return true;
}

std::vector<Tensor> if_gradient(const GradContext& c) {
  const std::vector<Tensor> xs(c.inputs.begin() + 1, c.inputs.end());
  const std::vector<size_t> wrt = floating_positions(xs);
  const auto variables = variables_of(c.subgraphs);
  auto then_fn = [&] { return replay_gradient(*c.subgraphs[0], xs, c.dys, wrt, variables); };
  auto else_fn = [&] { return replay_gradient(*c.subgraphs[1], xs, c.dys, wrt, variables); };
  const std::vector<Tensor> staged = staged_cond(c.inputs[0], then_fn, else_fn, c.loc);
  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < wrt.size(); ++i) result[1 + wrt[i]] = staged[i];
  for (size_t i = 0; i < variables.size(); ++i) c.variable_grads.push_back({variables[i].get(), staged[wrt.size() + i]});
  return result;
}

std::vector<Tensor> while_gradient(const GradContext& c) {
  const Graph& cond = *c.subgraphs[0];
  const Graph& body = *c.subgraphs[1];
  const size_t n = static_cast<size_t>(c.attrs.loop_vars());
  const std::vector<Tensor> invariants(c.inputs.begin() + static_cast<std::ptrdiff_t>(n), c.inputs.end());
  // TensorArrays the body only writes (accumulators, as in dynamic_rnn) are not saved: each step
  // is replayed with the final array. Others are not differentiated yet.
  std::vector<bool> accumulator(n, false);
  for (size_t j = 0; j < n; ++j) {
    if (c.inputs[j].dtype() != DType::List) continue;
    if (!only_written(body, j))
      throw UnimplementedError(fmt::format(
          "the gradient of a staged while loop{} whose body reads a TensorArray it carries is not supported yet "
          "(an array the body only writes is)",
          at(c.loc)));
    accumulator[j] = true;
  }
  auto with_invariants = [&](std::span<const Tensor> vars) {
    std::vector<Tensor> xs(vars.begin(), vars.end());
    xs.insert(xs.end(), invariants.begin(), invariants.end());
    return xs;
  };

  // 1. The forward loop again, writing the loop variables of iteration k at index k.
  std::vector<Tensor> fwd(c.inputs.begin(), c.inputs.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t j = 0; j < n; ++j)
    fwd.push_back(accumulator[j] ? c.inputs[j] : TensorArray(c.inputs[j].dtype()).handle());  // (unused: not saved)
  fwd.push_back(Tensor(int32_t{0}));
  auto fwd_cond = [&]() -> Tensor {
    std::vector<Tensor> out(1);
    replay_graph(cond, with_invariants({fwd.data(), n}), out);
    return out[0];
  };
  auto fwd_body = [&] {
    const Tensor k = fwd[2 * n];
    for (size_t j = 0; j < n; ++j) {
      if (accumulator[j]) continue;
      TensorArray saved = TensorArray::from_handle(fwd[n + j], c.inputs[j].dtype());
      saved.write(k, fwd[j]);
      fwd[n + j] = saved.handle();
    }
    std::vector<Tensor> next(n);
    replay_graph(body, with_invariants({fwd.data(), n}), next);
    for (size_t j = 0; j < n; ++j) fwd[j] = next[j];
    fwd[2 * n] = k + 1;
  };
  std::vector<StateVar> fwd_vars;
  append_state_vars(fwd_vars, fwd, "the loop's state (for its gradient)");
  staged_while(fwd_cond, fwd_body, fwd_vars, c.loc, "while loop (forward, for its gradient)");
  const std::vector<Tensor> saved(fwd.begin() + static_cast<std::ptrdiff_t>(n), fwd.begin() + static_cast<std::ptrdiff_t>(2 * n));
  const std::vector<Tensor> final_arrays(fwd.begin(), fwd.begin() + static_cast<std::ptrdiff_t>(n));

  // 2. The body steps backwards: [d loop vars (floating), d invariants (floating), d Variables, k].
  std::vector<Tensor> all(c.inputs.begin(), c.inputs.end());
  const std::vector<size_t> wrt = floating_positions(all);  // loop vars first, then invariants
  const auto variables = variables_of(std::span(c.subgraphs).subspan(1));
  std::vector<Tensor> bwd;
  for (size_t p : wrt) bwd.push_back(p < n ? c.dys[p] : zero_gradient(c.inputs[p]));
  for (const auto& v : variables) bwd.push_back(zeros(v->shape, v->dtype));
  bwd.push_back(fwd[2 * n] - 1);
  auto bwd_cond = [&]() -> Tensor { return bwd.back() >= 0; };
  auto bwd_body = [&] {
    const Tensor k = bwd.back();
    std::vector<Tensor> step(n);
    for (size_t j = 0; j < n; ++j)
      step[j] = accumulator[j] ? final_arrays[j] : TensorArray::from_handle(saved[j], c.inputs[j].dtype()).read(k);
    std::vector<Tensor> dys(n);
    for (size_t i = 0; i < wrt.size() && wrt[i] < n; ++i) dys[wrt[i]] = bwd[i];
    const std::vector<Tensor> g = replay_gradient(body, with_invariants(step), dys, wrt, variables);
    for (size_t i = 0; i < wrt.size(); ++i) bwd[i] = wrt[i] < n ? g[i] : bwd[i] + g[i];  // invariants accumulate
    for (size_t i = wrt.size(); i < wrt.size() + variables.size(); ++i) bwd[i] = bwd[i] + g[i];
    bwd.back() = k - 1;
  };
  std::vector<StateVar> bwd_vars;
  append_state_vars(bwd_vars, bwd, "the loop's gradient");
  staged_while(bwd_cond, bwd_body, bwd_vars, c.loc, "while loop (gradient)");

  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < wrt.size(); ++i) result[wrt[i]] = bwd[i];
  for (size_t i = 0; i < variables.size(); ++i) c.variable_grads.push_back({variables[i].get(), bwd[wrt.size() + i]});
  return result;
}

}  // namespace

std::vector<Tensor> grad_none(const GradContext& c) {
  throw InternalError(fmt::format("gradient: {} has no gradient rule but was recorded", user_op_name(c.op)));
}

std::vector<Tensor> grad_source(const GradContext&) { return {}; }

std::vector<Tensor> grad_unsupported(const GradContext& c) {
  throw UnimplementedError(fmt::format("the gradient of {} is not supported yet{} (the tape recorded it because "
                                       "its input depends on a watched tensor); docs/gradients.md lists what is",
                                       user_op_name(c.op), at(c.loc)));
}

std::vector<Tensor> grad_control(const GradContext& c) {
  refuse_effects(c, c.op == OpKind::If ? "if" : "while loop");
  return c.op == OpKind::If ? if_gradient(c) : while_gradient(c);
}

}  // namespace ag::detail
