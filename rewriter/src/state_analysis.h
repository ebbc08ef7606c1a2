// Which variables a construct modifies that are declared outside it: the state it carries
// (AutoGraph's activity analysis). Variables are locals, parameters, members/elements of local
// aggregates (s.h, arr[0]), members of *this, globals (named "::g"), and generated flags.
#pragma once

#include <clang/AST/Decl.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir.h"
#include "source_text.h"

namespace ag::rewriter {

struct StateVar {
  std::string expr;  // C++ naming it where the construct is: x, s.h, arr[0], this->w, ag__break_1
  std::string name;  // for messages: the same, "::g" for a global
  std::string key;   // identity: root and access path
  const clang::ValueDecl* root = nullptr;  // null for generated flags
  clang::QualType type;                    // null for generated flags (ag::Tensor)
  bool global = false;
  clang::SourceLocation where;  // its first modification
};

struct Effects {
  std::vector<StateVar> modified;
  std::set<const clang::ValueDecl*> declared;
  std::set<std::string> declared_generated;
  std::vector<std::pair<const clang::ValueDecl*, clang::SourceLocation>> address_taken;
  void merge(const Effects& other);
};

class StateAnalysis {
 public:
  explicit StateAnalysis(const SourceText& src) : src_(src) {}

  // What the statement (and the lambdas in it) modifies, declares and takes the address of.
  const Effects& ofStmt(const clang::Stmt* s);
  // The same over a statement tree (generated nodes included); null nodes have no effects.
  Effects ofNode(const StmtNode* n);
  // The variables in `parts` modified and declared outside all of them, sorted by name;
  // `extra_declared` adds names declared inside (a range-for's loop variable).
  std::vector<StateVar> stateOf(const std::vector<const StmtNode*>& parts, const std::vector<const clang::Expr*>& exprs = {},
                                const clang::ValueDecl* extra_declared = nullptr);

 private:
  const SourceText& src_;
  std::map<const clang::Stmt*, Effects> cache_;
};

}  // namespace ag::rewriter
