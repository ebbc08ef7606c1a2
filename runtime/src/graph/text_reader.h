// The pieces of the graph text parser (parser.cpp) that read one line: a cursor over it, and the
// readers of types, shapes, attributes and constants. Private to runtime/src/graph.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ag/graph/graph.h"

namespace ag::graph_text {

// One line's text and a position in it; every error names the line and column.
class Cursor {
 public:
  Cursor(std::string_view text, int line) : text_(text), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
  // An error about what starts at `pos` (an op name, a value).
  [[noreturn]] void fail_at(size_t pos, const std::string& what) const {
    throw ValueError(fmt::format("graph text:{}:{}: {}", line_, pos + 1, what));
  }
  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool at_end() {
    skip_spaces();
    return pos_ >= text_.size();
  }
  char peek() {
    skip_spaces();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat(std::string_view word) {
    skip_spaces();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void expect(char c, const char* where) {
    if (!eat(c)) fail(fmt::format("expected '{}' {}, found {}", c, where, found()));
  }
  void expect_end() {
    if (!at_end()) fail("unexpected text " + found());
  }
  std::string found() {
    if (at_end()) return "the end of the line";
    return fmt::format("'{}'", text_.substr(pos_, std::min<size_t>(12, text_.size() - pos_)));
  }
  // [A-Za-z_][A-Za-z0-9_]*
  std::string_view ident() {
    skip_spaces();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  int64_t integer(const char* what) {
    skip_spaces();
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start || text_.substr(start, pos_ - start) == "-") fail(fmt::format("expected {}, found {}", what, found()));
    return std::strtoll(std::string(text_.substr(start, pos_ - start)).c_str(), nullptr, 10);
  }
  // Everything up to the first `stop` character (not consumed).
  std::string_view until(char stop) {
    skip_spaces();
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != stop) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // The text between a `{` just eaten and its `}` (quotes respected); the `}` is consumed.
  std::string_view braced() {
    const size_t start = pos_;
    bool quoted = false;
    for (; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (quoted && c == '\\') ++pos_;
      else if (c == '"') quoted = !quoted;
      else if (!quoted && c == '}') return text_.substr(start, pos_++ - start);
    }
    fail("the attributes' '{' is not closed");
  }
  std::string_view rest() {
    skip_spaces();
    return text_.substr(pos_);
  }
  size_t pos() const { return pos_; }
  int line() const { return line_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_;
};

// The file name of a parsed location, kept for the process (SourceLoc holds a const char*).
const char* interned_file_name(const std::string& name);
std::optional<OpKind> op_named(std::string_view name);
std::optional<DType> dtype_named(std::string_view name);
// The sub-graph keywords, by op and position (printer.cpp's subgraph_name), and their number.
const char* subgraph_keyword(OpKind op, size_t i);
size_t subgraph_count(OpKind op);

// `f32[2,?]`, `f32[*]`, `list<f32[?]>`, `list<f32[*], any shape>`.
TensorType parse_type(Cursor& c);
// A Shape attribute: [2,-1] or [2,?].
Shape parse_shape(Cursor& c);
// One attribute text split into `key=value` items at top-level commas (brackets, parentheses and
// quotes nest; `range=[0, 1)` is one item).
std::vector<std::pair<std::string, std::string>> split_attrs(std::string_view text, const Cursor& where);
// A Const's value (tf.print's text, or a TensorArray constant), as many elements as `type` holds.
Tensor parse_constant(const std::string& text, const TensorType& type, Cursor& c);
double parse_double(const std::string& text, Cursor& c);
int64_t parse_int(const std::string& text, Cursor& c);
Shape parse_shape_text(const std::string& text, const Cursor& c);
std::string parse_quoted_text(const std::string& text, const Cursor& c);
// A `format=["x is", %]` list: the text pieces and the mask of tensor positions.
void parse_print_format(const std::string& text, Attrs& a, const Cursor& c);

}  // namespace ag::graph_text
