// Converts `while` with a tensor condition into ag::while_stmt (AutoGraph's control_flow
// converter, visit_While): the condition and the body become lambdas; the variables the body
// (or the condition) assigns that live outside the loop are carried around it. A lowered
// break or return stops the loop through its condition.
#include <fmt/format.h>

#include "emitter.h"
#include "templates.h"

namespace ag::rewriter {

void emitWhileStatement(Emitter& e, const Node& n, int indent) {
  std::vector<StateVar> vars = e.state(n, {n.body.get()}, {n.cond}, "while");
  if (n.stmt) e.checks.checkLoop(n.stmt, vars);
  e.breakFlagDeclaration(n, indent);
  e.out.line(indent, fmt::format(tmpl::kWhileHead), n.line);
  e.out.line(indent + 4, fmt::format(tmpl::kCondLambda, fmt::arg("cond", e.loopCondition(n))));
  std::vector<std::string> prelude;
  if (!n.continue_flag.empty()) prelude.push_back(fmt::format(tmpl::kFlagDecl, fmt::arg("flag", n.continue_flag)));
  e.lambda(n.body.get(), indent + 4, {}, prelude);
  e.stateTail(vars, n.line, indent + 4);
}

}  // namespace ag::rewriter
