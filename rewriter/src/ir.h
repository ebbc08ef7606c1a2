// The statement tree the converters work on: the function's statements as Clang parsed them,
// plus what the lowering passes generate (flag declarations and assignments, guards). A node
// with nothing converted inside it is printed exactly as the user wrote it.
#pragma once

#include <clang/AST/Stmt.h>

#include <memory>
#include <string>
#include <vector>

namespace ag::rewriter {

enum class NodeKind {
  Block,      // { children }
  Original,   // a statement kept as written (expressions inside it may still be converted)
  If,         // staged: ag::if_stmt. Guards (`if (!flag) rest`) are generated Ifs
  While,      // staged: ag::while_stmt
  DoWhile,    // staged: ag::do_while_stmt
  For,        // C-style for; staged: init + ag::while_stmt
  RangeFor,   // staged: ag::for_stmt
  Jump,       // break / continue / return, before lowering (kept native when not lowered)
  Generated,  // a statement the lowering wrote
  Labeled,    // `case 1:` / `default:` / `label:` before a statement
  Switch,     // switch on a C++ value (a tensor switch is an error)
  Try,        // try { } catch (...) { } ...
};

enum class JumpKind { Break, Continue, Return };

struct StmtNode;
using StmtNodePtr = std::unique_ptr<StmtNode>;

struct StmtNode {
  explicit StmtNode(NodeKind k, const clang::Stmt* s = nullptr, unsigned l = 0) : kind(k), stmt(s), line(l) {}

  NodeKind kind;
  const clang::Stmt* stmt;  // the statement this node came from; null when generated
  unsigned line;            // its original line (generated: the line of what it was made for)
  bool staged = false;      // If and loops: converted into an ag:: operator call

  // Block: statements. Try: the try block, then one block per handler. Original: when one
  // macro use spells several statements (`#define STEP a(); b()`), those statements (the
  // node prints `text`, the use as written).
  std::vector<StmtNodePtr> children;
  std::vector<std::string> handler_headers;  // Try: "catch (const std::exception& e)"
  // Comments around a statement of a block, kept in the output.
  std::string comment_before, comment_after;
  unsigned comment_line = 0;
  std::string inner_comment;  // Block: the comments before its '}'
  unsigned inner_comment_line = 0;

  // If and loops.
  const clang::Expr* cond = nullptr;  // the condition as written
  std::string cond_text;              // or a generated condition (guards)
  StmtNodePtr then_branch, else_branch;   // If
  StmtNodePtr init;                       // For / If / Switch: the init statement
  const clang::Expr* inc = nullptr;   // For
  StmtNodePtr body;                       // loops, Switch, Labeled
  StmtNode* iteration = nullptr;          // staged For: the original body inside `body` (which adds the increment)
  const clang::VarDecl* loop_var = nullptr;  // RangeFor
  const clang::Expr* range = nullptr;        // RangeFor: the range expression

  // Filled by the lowering of break/continue/return.
  std::string break_flag;               // declared just before this loop
  std::string continue_flag;            // declared at the start of this loop's body
  std::vector<std::string> stop_flags;  // flags that end this loop (its break flag, the return flag)
  std::string scoped_flag;              // a loop body: its loop's continue flag, which stays inside it
  std::string plain_reason;             // a tensor-stopped loop left plain: why (for ag::loop_flag's error)

  // Jump.
  JumpKind jump = JumpKind::Break;
  StmtNode* target = nullptr;       // the loop or switch a break/continue leaves
  bool crosses_staged = false;  // a staged construct lies between the jump and its target
  std::vector<StmtNode*> enclosing_loops;  // return: the loops it leaves, innermost first

  // Generated statements (and Labeled: the label text; Original: a macro use's text).
  std::string text;
  std::string declares;  // the name a generated statement declares
  std::vector<std::string> assigns;  // the names it assigns
};

inline StmtNodePtr makeGenerated(std::string text, unsigned line) {
  auto n = std::make_unique<StmtNode>(NodeKind::Generated, nullptr, line);
  n->text = std::move(text);
  return n;
}

// The statements nested directly in `n`: its children, then its then and else branches, its init
// statement and its body (those present). Every walk of the tree takes this one list, so a field
// added to StmtNode is visited by all of them. (goto_statements.cpp walks `init` apart: it runs
// outside a staged construct's lambdas.)
inline std::vector<StmtNode*> childrenOf(const StmtNode& n) {
  std::vector<StmtNode*> out;
  out.reserve(n.children.size() + 4);
  for (const auto& c : n.children) out.push_back(c.get());
  for (StmtNode* c : {n.then_branch.get(), n.else_branch.get(), n.init.get(), n.body.get()})
    if (c) out.push_back(c);
  return out;
}

inline bool isLoop(NodeKind k) {
  return k == NodeKind::While || k == NodeKind::DoWhile || k == NodeKind::For || k == NodeKind::RangeFor;
}

}  // namespace ag::rewriter
