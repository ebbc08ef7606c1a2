// Small helpers of the conversion context.
#include "context.h"

#include <fmt/format.h>

#include "templates.h"

namespace ag::rewriter {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Context::sourceLoc(unsigned line) const {
  return fmt::format(tmpl::kSourceLoc, fmt::arg("file", quoted(file_label)), fmt::arg("line", line));
}

}  // namespace ag::rewriter
