// Gradient rules of the ops that are not arithmetic: none (never called: the tape does not record
// such ops), sources (a Variable read has no inputs), ops whose gradient agc does not compute yet,
// and staged control flow.
//
// A staged If's gradient is an If on the same predicate over the gradients of its branches (a
// staged While's: while_gradient.cpp). A branch is differentiated by replaying its graph under a
// tape inside the new If (replay_gradient), so the backward is staged, optimized and compiled with
// the forward. Variables read inside get their gradients too; inputs and Variables that no output
// with a gradient depends on get none. Sub-graphs with side effects are refused: replaying them
// would repeat their assignments, prints and draws.
#include "control_rules.h"

#include "connectivity.h"

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
    // (An assert checks what the forward checked already: replaying it repeats nothing visible.)
    if (op_info(n.op).stateful && n.op != OpKind::ReadVariable && n.op != OpKind::Assert &&
        op_class(n.op) != OpClass::Control)
      return true;
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
          "the gradient of a staged {}{} whose {} has side effects (variable assignments, prints, random draws) is "
          "not supported yet: differentiating it would repeat them",
          what, at(c.loc), c.op == OpKind::If ? "branches" : "body"));
}

}  // namespace

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

std::vector<Tensor> connected_only(const GradContext& c, std::vector<Tensor> result,
                                   const std::vector<std::shared_ptr<VariableState>>& variables,
                                   std::span<const Tensor> variable_grads) {
  const size_t n = c.inputs.size();
  const SourceSet connected = reached_sources(
      control_output_sources(c.op, c.subgraphs, n, static_cast<size_t>(c.attrs.loop_vars()), variables), c.reached,
      n + variables.size());
  for (size_t i = 0; i < n; ++i)
    if (!connected[i]) result[i] = Tensor();
  for (size_t i = 0; i < variables.size(); ++i)
    if (connected[n + i]) c.variable_grads.push_back({variables[i].get(), variable_grads[i]});
  return result;
}

namespace {

std::vector<Tensor> if_gradient(const GradContext& c) {
  const std::vector<Tensor> xs(c.inputs.begin() + 1, c.inputs.end());
  const std::vector<size_t> wrt = floating_positions(xs);
  const auto variables = variables_of(c.subgraphs);
  auto then_fn = [&] { return replay_gradient(*c.subgraphs[0], xs, c.dys, wrt, variables); };
  auto else_fn = [&] { return replay_gradient(*c.subgraphs[1], xs, c.dys, wrt, variables); };
  const std::vector<Tensor> staged = staged_cond(c.inputs[0], then_fn, else_fn, c.loc);
  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < wrt.size(); ++i) result[1 + wrt[i]] = staged[i];
  return connected_only(c, std::move(result), variables, std::span(staged).subspan(wrt.size()));
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
