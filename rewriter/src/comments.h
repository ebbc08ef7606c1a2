// The user's comments around converted statements, kept in the output: between the statements
// of a block, and between an if's condition, its branches and `else`.
#pragma once

#include <clang/AST/Stmt.h>

#include <string>

#include "ir.h"
#include "source_text.h"

namespace ag::rewriter {

// Splits the text between two statements of a block (starting on `gap_line`) into the previous
// statement's same-line comment and the comment lines (with one blank line) before the next.
void attachGapComments(const std::string& gap, unsigned gap_line, StmtNode* prev, StmtNode& next);
// Comments between `if (...)` and its branch and around `else` go with the branches.
void attachBranchComments(const SourceText& src, const clang::IfStmt* s, StmtNode& node);

}  // namespace ag::rewriter
