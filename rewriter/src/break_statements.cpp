// Lowers `break` into a flag (AutoGraph's break_statements converter): `ag::Tensor
// ag__break_N = false;` before the loop, `ag__break_N = true;` in place of the break; the loop
// stops on the flag (its condition / extra test) and the rest of the body is guarded by it.
// The breaks of loops that need flags are lowered (Flags::loops): staged loops, and loops
// whose bodies get guards; a break elsewhere stays a break.
#include "lowering.h"

namespace ag::rewriter {

void lowerBreakStatements(Context& cx, FunctionIr& ir, Flags& flags) {
  lowerJumpsToFlag(ir, JumpKind::Break, flags, [&](StmtNode& loop) {
    if (loop.break_flag.empty()) {
      loop.break_flag = cx.namer.numbered("ag__break");
      loop.stop_flags.push_back(loop.break_flag);
    }
    return loop.break_flag;
  });
}

}  // namespace ag::rewriter
