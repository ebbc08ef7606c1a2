// The registration statement emitted after a converted free function.
#pragma once

#include <clang/AST/Decl.h>

#include <optional>
#include <string>

#include "source_text.h"

namespace ag::rewriter {

// ` static const bool ag__info_f_12 = ::ag::detail::register_function_info(...);` for a free,
// non-template function (the others have no address to register); nullopt otherwise.
std::optional<std::string> registrationFor(const clang::FunctionDecl* fn, const SourceText& src);

}  // namespace ag::rewriter
