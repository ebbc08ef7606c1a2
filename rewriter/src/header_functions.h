// The warning for an AG_FUNCTION defined in a header: only the file being rewritten is
// converted, so its tensor control flow would stay unconverted (never silently).
#pragma once

#include <clang/AST/ASTContext.h>

#include "diagnostics.h"

namespace ag::rewriter {

void warnMarkedFunctionsInHeaders(clang::ASTContext& ctx, Diagnostics& diags);

}  // namespace ag::rewriter
