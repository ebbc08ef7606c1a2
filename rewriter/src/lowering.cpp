// What the break and continue lowerings share: replacing a loop's jumps by a flag assignment.
#include <fmt/format.h>

#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {

void lowerJumpsToFlag(FunctionIr& ir, JumpKind kind, Flags& flags, const std::function<std::string(StmtNode& loop)>& flag_of) {
  for (StmtNode* jump : ir.jumps) {
    if (jump->kind != NodeKind::Jump || jump->jump != kind || !jump->target || !flags.loops.count(jump->target)) continue;
    const std::string flag = flag_of(*jump->target);
    flags.names.insert(flag);
    jump->kind = NodeKind::Generated;
    jump->text = fmt::format(tmpl::kFlagSet, fmt::arg("flag", flag));
    jump->assigns = {flag};
  }
}

}  // namespace ag::rewriter
