// Which variables are live after each staged construct (AutoGraph's liveness analysis, which
// its control-flow converter uses the same way): a staged if's outputs are the variables it
// modifies that are live after it, a staged loop's variables those live after it or at its
// head. A variable dead after an if — `t = ag::stack({t, t})` on one path only — then never
// has to agree in rank between the branches, and a temporary of a loop body is not carried.
//
// The analysis is conservative: what it cannot follow is live. Variables referenced in a
// lambda, whose address is taken, bound to a reference or passed by non-const reference, and
// reference parameters are live everywhere; so is everything when the function has a goto.
// Liveness is per root variable: a use of `s` or `s.h` is a use of every path rooted at `s`.
#pragma once

#include <clang/AST/Decl.h>

#include <functional>
#include <map>
#include <set>

#include "ir.h"

namespace ag::rewriter {

class Liveness {
 public:
  using Vars = std::set<const clang::ValueDecl*>;

  // The variables (roots) a statement tree may modify (StateAnalysis), for the rule on ifs below.
  using WrittenIn = std::function<Vars(const StmtNode*)>;

  // Analyzes the statement tree of `fn`'s body (after the lowering of break/continue/return).
  // An if's branches are traced one after the other, and the second must start from the values
  // before the if: a variable one branch writes and the other reads before writing is state of
  // the if, so it counts as live after the if (and at the end of both branches, so that the
  // constructs inside them carry it too).
  Liveness(const clang::FunctionDecl* fn, const StmtNode* body, WrittenIn written_in);

  // Whether `root` (a variable of the function) may be read after `construct` runs, or, for a
  // loop, at its head (before its condition, on entry and after each iteration). True for
  // constructs the analysis did not reach.
  bool live(const StmtNode* construct, const clang::ValueDecl* root) const;

 private:
  struct Loop {
    const Vars* after;  // live after the loop (a break)
    const Vars* next;   // live where a continue goes
  };
  Vars before(const StmtNode* n, const Vars& after, const Loop* loop);
  Vars loop_head(const StmtNode* n, const Vars& after);
  Vars conservative(const StmtNode* n, const Vars& after);

  Vars locals_;    // the function's own variables: the only ones liveness decides for
  Vars escaping_;  // locals it cannot follow
  bool give_up_ = false;
  std::map<const StmtNode*, Vars> live_;  // per staged construct: live after it (loops: and at the head)
  WrittenIn written_in_;
};

}  // namespace ag::rewriter
