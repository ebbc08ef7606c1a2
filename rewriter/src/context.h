// What every pass converting one AG_FUNCTION needs: the source, diagnostics, options, names,
// and a way to convert the lambdas defined inside it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ag/rewriter/rewriter.h"
#include "diagnostics.h"
#include "namer.h"
#include "source_text.h"

namespace clang {
class LambdaExpr;
}

namespace ag::rewriter {

struct Context {
  SourceText& src;
  Diagnostics& diags;
  const Options& options;
  std::string file_label;  // the original file's name, for AG_SOURCE_LOC
  Namer& namer;            // shared by a function and the lambdas inside it
  // Converts the body of a lambda defined in the function; nullopt when it needs nothing.
  std::function<std::optional<std::string>(const clang::LambdaExpr*)> convert_lambda;

  // `AG_SOURCE_LOC("file.cpp", 12)`
  std::string sourceLoc(unsigned line) const;
};

// Escapes a string for a C++ string literal.
std::string quoted(const std::string& s);

}  // namespace ag::rewriter
