// The lines of a converted function body, each knowing the original line it stands for, and
// their rendering with indentation and #line directives (only where the line numbering would
// otherwise drift, so the output stays readable).
#pragma once

#include <string>
#include <vector>

namespace ag::rewriter {

class CodeWriter {
 public:
  // A generated line (text without newlines) standing for original line `line` (0: any).
  void line(int indent, std::string text, unsigned line = 0);
  // Generated text that may span lines; the first stands for `line`.
  void lines(int indent, const std::string& text, unsigned line);
  // A piece of the original source from `line` to `end_line`; its first line was indented by
  // `original_indent` spaces, its later lines keep their indentation relative to it.
  void original(int indent, std::string text, unsigned line, unsigned end_line, int original_indent);
  // Appends to the last line (a trailing comment, a separator).
  void append(const std::string& text);
  bool empty() const { return items_.empty(); }

  // The text, one item per line; `next_line` is the line number the first item's line gets
  // without a directive.
  std::string render(bool line_directives, unsigned next_line) const;

 private:
  struct Item {
    std::string text;
    int indent = 0;
    unsigned line = 0;
    unsigned end_line = 0;  // original pieces: the line after them is end_line + 1
    int shift = 0;          // original pieces: added to the indentation of their later lines
  };
  std::vector<Item> items_;
};

// "#line 12" (file: "#line 12 \"a.cpp\"").
std::string lineDirective(unsigned line, const std::string& file = {});

}  // namespace ag::rewriter
