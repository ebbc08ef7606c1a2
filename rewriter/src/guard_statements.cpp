// The guards that lowered jumps need: after a statement that may set a flag, the rest of its
// block runs under `if (!flag)` (an ag::if_stmt, so it also works when the flag is symbolic).
// Nested blocks are guarded first, so every block on the path from a jump up to its target
// gets its own guard, as in AutoGraph.
#include <fmt/format.h>

#include "lowering.h"
#include "templates.h"

namespace ag::rewriter {
namespace {

// The flags that `n` may set and that outlive it (a loop's own flags stay inside the loop).
std::set<std::string> flagsSetBy(const StmtNode* n, const Flags& flags) {
  std::set<std::string> out;
  if (!n) return out;
  if (n->kind == NodeKind::Generated) {
    for (const std::string& a : n->assigns)
      if (flags.names.count(a) && std::find(flags.retvals.begin(), flags.retvals.end(), a) == flags.retvals.end())
        out.insert(a);
    return out;
  }
  auto add = [&](const StmtNode* c) {
    std::set<std::string> s = flagsSetBy(c, flags);
    out.insert(s.begin(), s.end());
  };
  for (const StmtNode* c : childrenOf(*n)) add(c);
  if (isLoop(n->kind)) out.erase(n->break_flag), out.erase(n->continue_flag);
  if (!n->scoped_flag.empty()) out.erase(n->scoped_flag);
  return out;
}

class Guarder {
 public:
  Guarder(Context& cx, const Flags& flags) : cx_(cx), flags_(flags) {}

  void node(StmtNode* n) {
    if (!n) return;
    if (n->kind == NodeKind::Block) return block(n);
    if (n->kind == NodeKind::Switch && !flagsSetBy(n->body.get(), flags_).empty()) {
      // Guarding part of a switch body would move case labels into a lambda.
      cx_.diags.report(Diag::JumpOutOfSwitch, n->stmt->getBeginLoc(), {"construct"});
      return;
    }
    for (StmtNode* c : childrenOf(*n)) node(c);
  }

 private:
  void block(StmtNode* b) {
    for (auto& c : b->children) node(c.get());
    sequence(b->children);
  }

  void sequence(std::vector<StmtNodePtr>& children) {
    for (size_t i = 0; i + 1 < children.size(); ++i) {
      std::set<std::string> set = flagsSetBy(children[i].get(), flags_);
      if (set.empty()) continue;
      auto rest = std::make_unique<StmtNode>(NodeKind::Block, nullptr, children[i + 1]->line);
      for (size_t k = i + 1; k < children.size(); ++k) rest->children.push_back(std::move(children[k]));
      children.resize(i + 1);
      sequence(rest->children);
      auto guard = std::make_unique<StmtNode>(NodeKind::If, nullptr, rest->line);
      guard->staged = true;
      guard->cond_text = notFlags({set.begin(), set.end()});
      guard->then_branch = std::move(rest);
      children.push_back(std::move(guard));
      return;
    }
  }

  Context& cx_;
  const Flags& flags_;
};

}  // namespace

std::string notFlags(const std::vector<std::string>& flags) {
  std::string joined;
  for (const std::string& f : flags) joined += (joined.empty() ? "" : " | ") + f;
  return fmt::format(tmpl::kNotFlag, fmt::arg("flags", joined));
}

void guardStatementsAfterJumps(Context& cx, FunctionIr& ir, const Flags& flags) { Guarder(cx, flags).node(ir.body.get()); }

}  // namespace ag::rewriter
