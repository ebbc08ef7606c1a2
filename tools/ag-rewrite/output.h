// What ag-rewrite writes: the rewritten file (atomically), a diff of it, a depfile.
#pragma once

#include <string>

#include "ag/rewriter/rewriter.h"

namespace ag::tool {

// Writes `text` to `path` through a temporary file and a rename, so that a reader never sees
// half a file. Returns an error message, or "" on success.
std::string writeAtomically(const std::string& path, const std::string& text);
// A unified diff (no context lines) of the original file and its rewritten form.
std::string unifiedDiff(const rewriter::FileResult& result);
// The rewritten text written to `output_path`, with one more line at its end when anything
// was converted: the registration of the original and its rewritten copy with the runtime
// (ag::detail::register_source_file), so the HTML inspection report can show them side by side.
std::string withSourceRegistration(const rewriter::FileResult& result, const std::string& output_path);
// A Makefile-style depfile: `target: <every file the compile read>`.
std::string depfile(const std::string& target, const rewriter::FileResult& result);

}  // namespace ag::tool
