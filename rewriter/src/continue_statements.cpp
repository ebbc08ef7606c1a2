// Lowers `continue` into a flag (AutoGraph's continue_statements converter): `ag::Tensor
// ag__continue_N = false;` at the start of each iteration, `ag__continue_N = true;` in place of
// the continue, and the rest of the iteration guarded by the flag. A C-style for's increment
// still runs after a continue (it sits after the iteration's scope).
#include "lowering.h"

namespace ag::rewriter {

void lowerContinueStatements(Context& cx, FunctionIr& ir, Flags& flags) {
  lowerJumpsToFlag(ir, JumpKind::Continue, flags, [&](StmtNode& loop) {
    if (loop.continue_flag.empty()) {
      loop.continue_flag = cx.namer.numbered("ag__continue");
      (loop.iteration ? loop.iteration : loop.body.get())->scoped_flag = loop.continue_flag;
    }
    return loop.continue_flag;
  });
}

}  // namespace ag::rewriter
