// Renders a converted body: indentation, re-indented original pieces, #line directives.
#include "code_writer.h"

#include <fmt/format.h>

#include <algorithm>

#include "context.h"
#include "templates.h"

namespace ag::rewriter {
namespace {

// Moves the lines after the first by `shift` columns. Text with raw strings or line
// continuations is left alone: its whitespace may be significant.
std::string reindent(const std::string& text, int shift) {
  if (shift == 0 || text.find("R\"") != std::string::npos || text.find("\\\n") != std::string::npos) return text;
  std::string out;
  size_t pos = 0;
  bool first = true;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (!first && !line.empty()) {
      if (shift > 0) {
        line.insert(0, static_cast<size_t>(shift), ' ');
      } else {
        size_t spaces = 0;
        while (spaces < line.size() && spaces < static_cast<size_t>(-shift) && line[spaces] == ' ') ++spaces;
        line.erase(0, spaces);
      }
    }
    out += (first ? "" : "\n") + line;
    first = false;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string lineDirective(unsigned line, const std::string& file) {
  if (file.empty()) return fmt::format(tmpl::kLineDirective, fmt::arg("line", line));
  return fmt::format(tmpl::kFileLineDirective, fmt::arg("line", line), fmt::arg("file", quoted(file)));
}

void CodeWriter::line(int indent, std::string text, unsigned line) {
  items_.push_back({std::move(text), indent, line, 0, 0});
}

void CodeWriter::lines(int indent, const std::string& text, unsigned first_line) {
  size_t pos = 0;
  bool first = true;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    line(indent, text.substr(pos, end == std::string::npos ? std::string::npos : end - pos), first ? first_line : 0);
    first = false;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
}

void CodeWriter::original(int indent, std::string text, unsigned line, unsigned end_line, int original_indent) {
  items_.push_back({std::move(text), indent, line, end_line, indent - original_indent});
}

void CodeWriter::append(const std::string& text) {
  if (!items_.empty()) items_.back().text += text;
}

std::string CodeWriter::render(bool line_directives, unsigned next_line) const {
  std::string out;
  unsigned presumed = next_line;
  for (const Item& item : items_) {
    if (line_directives && item.line != 0 && item.line != presumed) {
      out += lineDirective(item.line) + "\n";
      presumed = item.line;
    }
    const std::string text = item.shift != 0 ? reindent(item.text, item.shift) : item.text;
    if (!text.empty()) out += std::string(static_cast<size_t>(std::max(item.indent, 0)), ' ');
    out += text + "\n";
    presumed = item.end_line != 0 ? item.end_line + 1
                                  : presumed + 1 + static_cast<unsigned>(std::count(text.begin(), text.end(), '\n'));
  }
  return out;
}

}  // namespace ag::rewriter
