// libag_rewriter's entry point: the Clang frontend action that converts AG_FUNCTION functions.
#pragma once

#include <clang/Tooling/Tooling.h>

#include <memory>
#include <string>
#include <vector>

namespace ag::rewriter {

struct Options {
  bool line_directives = true;     // #line back to the original file, so errors land on the user's lines
  bool register_functions = true;  // emit ag::detail::register_function_info for converted free functions
};

// One replaced region of the original file (a converted function body).
struct Edit {
  unsigned begin = 0, end = 0;  // byte offsets in the original text
  std::string replacement;
};

// What rewriting one main file produced.
struct FileResult {
  std::string path;                       // the main file, as the compiler saw it
  std::string original;                   // its text
  std::string rewritten;                  // the output; == original when nothing was converted
  std::vector<Edit> edits;                // in file order
  std::vector<std::string> dependencies;  // every file the compile read (for depfiles)
  bool ok = false;                        // false: compiler errors or conversion errors
};

// A factory for ClangTool::run: each main file parsed appends one FileResult to `results`.
std::unique_ptr<clang::tooling::FrontendActionFactory> makeRewriteActionFactory(const Options& options,
                                                                                 std::vector<FileResult>& results);

}  // namespace ag::rewriter
