// Lowers `continue` into a flag (AutoGraph's continue_statements converter): `ag::Tensor
// ag__continue_N = false;` at the start of each iteration, `ag__continue_N = true;` in place of
// the continue, and the rest of the iteration guarded by the flag. A C-style for's increment
// still runs after a continue.
#include <fmt/format.h>

#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {

void lowerContinueStatements(Context& cx, FunctionIr& ir, Flags& flags) {
  for (Node* jump : ir.jumps) {
    if (jump->kind != NodeKind::Jump || jump->jump != JumpKind::Continue || !jump->target) continue;
    Node* loop = jump->target;
    if (!flags.loops.count(loop)) continue;
    if (loop->continue_flag.empty()) {
      loop->continue_flag = cx.namer.numbered("ag__continue");
      flags.names.insert(loop->continue_flag);
      (loop->iteration ? loop->iteration : loop->body.get())->scoped_flag = loop->continue_flag;
    }
    jump->kind = NodeKind::Generated;
    jump->text = fmt::format(tmpl::kFlagSet, fmt::arg("flag", loop->continue_flag));
    jump->assigns = {loop->continue_flag};
  }
}

}  // namespace ag::rewriter
