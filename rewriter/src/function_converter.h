// Converts one function body (or a lambda's): the pipeline of passes and converters.
#pragma once

#include <clang/AST/Decl.h>

#include <optional>
#include <string>

#include "context.h"

namespace ag::rewriter {

// The converted text of `body` (from its '{' through its '}'), or nullopt when nothing in it
// needs converting.
std::optional<std::string> convertFunctionBody(Context& cx, const clang::FunctionDecl* fn,
                                               const clang::CompoundStmt* body);

}  // namespace ag::rewriter
