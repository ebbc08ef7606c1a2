// Gradient rules of the ops that are not arithmetic: none (never called: the tape does not record
// such ops), sources (a Variable read has no inputs), ops whose gradient agc does not compute yet,
// and staged control flow. A staged If's gradient is an If over the gradients of its branches,
// each computed by replaying the branch under a tape inside the new branch (so the backward is
// staged and compiled with the forward). A staged While's is not computed yet.
#include "rules.h"

#include <fmt/format.h>

#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"

namespace ag::detail {

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
  if (c.op == OpKind::While)
    throw UnimplementedError(fmt::format(
        "the gradient of a staged while loop{} is not supported yet inside a traced function; compute it outside "
        "the Function (a tape records a Function's loop iteration by iteration) or see docs/gradients.md",
        at(c.loc)));
  for (const auto& branch : c.subgraphs)
    if (has_side_effects(*branch))
      throw UnimplementedError(fmt::format(
          "the gradient of a staged if{} whose branches have side effects (variable assignments, prints, random "
          "draws) is not supported yet inside a traced function",
          at(c.loc)));
  return staged_if_gradient(c.inputs, c.dys, *c.subgraphs[0], *c.subgraphs[1], c.loc);
}

}  // namespace ag::detail
