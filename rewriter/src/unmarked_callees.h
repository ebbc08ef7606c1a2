// The warning for a converted function calling a same-file function that has control flow on
// tensors but is not marked AG_FUNCTION (it would throw ConversionError when traced).
#pragma once

#include <clang/AST/Decl.h>

#include <vector>

#include "diagnostics.h"
#include "source_text.h"

namespace ag::rewriter {

void warnUnmarkedCallees(const std::vector<const clang::FunctionDecl*>& converted,
                         const std::vector<const clang::FunctionDecl*>& unmarked, Diagnostics& diags);

}  // namespace ag::rewriter
