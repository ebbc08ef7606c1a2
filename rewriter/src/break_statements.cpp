// Lowers `break` into a flag (AutoGraph's break_statements converter): `ag::Tensor
// ag__break_N = false;` before the loop, `ag__break_N = true;` in place of the break; the loop
// stops on the flag (its condition / extra test) and the rest of the body is guarded by it.
// Only breaks that must leave a lambda are lowered: those of a staged loop, and those inside a
// staged construct within a plain loop.
#include <fmt/format.h>

#include <map>

#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {

void lowerBreakStatements(Context& cx, FunctionIr& ir, Flags& flags) {
  for (Node* jump : ir.jumps) {
    if (jump->kind != NodeKind::Jump || jump->jump != JumpKind::Break || !jump->target) continue;
    Node* loop = jump->target;
    if (!flags.loops.count(loop)) continue;
    if (loop->break_flag.empty()) {
      loop->break_flag = cx.namer.numbered("ag__break");
      loop->stop_flags.push_back(loop->break_flag);
      flags.names.insert(loop->break_flag);
    }
    jump->kind = NodeKind::Generated;
    jump->text = fmt::format(tmpl::kFlagSet, fmt::arg("flag", loop->break_flag));
    jump->assigns = {loop->break_flag};
  }
}

}  // namespace ag::rewriter
