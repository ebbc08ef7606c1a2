// The graph text parser: graph_to_text's form back into a Graph (recursive descent over lines).
#include "ag/graph/parser.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "ag/construct.h"
#include "ag/detail/tensor_list.h"
#include "ag/detail/variable_state.h"
#include "ag/graph/verifier.h"

namespace ag {
namespace {

// File names of parsed locations live as long as the process: SourceLoc holds a const char*,
// as the compiler's own file names do.
const char* interned_file_name(const std::string& name) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard lock(mu);
  return names.insert(name).first->c_str();
}

std::optional<OpKind> op_named(std::string_view name) {
  static const std::map<std::string_view, OpKind> ops = [] {
    std::map<std::string_view, OpKind> m;
    for (int i = 0; i < kNumOps; ++i) m.emplace(op_name(static_cast<OpKind>(i)), static_cast<OpKind>(i));
    return m;
  }();
  auto it = ops.find(name);
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

std::optional<DType> dtype_named(std::string_view name) {
  for (DType d : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64})
    if (name == dtype_short_name(d) || name == dtype_name(d)) return d;
  return std::nullopt;
}

// The sub-graph keywords, by op and position (printer.cpp's subgraph_name).
const char* subgraph_keyword(OpKind op, size_t i) {
  if (op == OpKind::If) return i ? "else" : "then";
  if (op == OpKind::While) return i ? "body" : "cond";
  return "gradient";
}

size_t subgraph_count(OpKind op) { return op == OpKind::If || op == OpKind::While ? 2 : op == OpKind::CustomGradient ? 1 : 0; }

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

// `f32[2,?]`, `f32[*]`, `list<f32[?]>`, `list<f32[*], any shape>`.
void parse_dims(Cursor& c, TensorType& t) {
  c.expect('[', "after a dtype");
  if (c.eat('*')) {
    t.rank_unknown = true;
    c.expect(']', "after '[*'");
    return;
  }
  if (c.eat(']')) return;
  do {
    if (c.eat('?')) t.shape.push_back(Shape::kUnknown);
    else t.shape.push_back(c.integer("a dim"));
  } while (c.eat(','));
  c.expect(']', "after the dims");
}

TensorType parse_type(Cursor& c) {
  TensorType t;
  const std::string_view word = c.ident();
  if (word == "list") {
    t.dtype = DType::List;
    c.expect('<', "after 'list'");
    const std::string_view elem = c.ident();
    const auto d = dtype_named(elem);
    if (!d) c.fail(fmt::format("'{}' is not a dtype (i1, i32, i64, f32, f64)", elem));
    t.elem_dtype = *d;
    parse_dims(c, t);
    if (c.eat(',')) {
      if (!c.eat("any shape")) c.fail("expected 'any shape' in a list type, found " + c.found());
      t.elem_shape_varies = true;
    }
    c.expect('>', "after a list type");
    return t;
  }
  const auto d = dtype_named(word);
  if (!d) c.fail(fmt::format("expected a type (f32[2,?], i32[], list<f32[*]>), found {}", word.empty() ? c.found() : "'" + std::string(word) + "'"));
  t.dtype = *d;
  parse_dims(c, t);
  return t;
}

// A Shape attribute: [2,-1] or [2,?].
Shape parse_shape(Cursor& c) {
  Shape s;
  c.expect('[', "to start a shape");
  if (c.eat(']')) return s;
  do {
    if (c.eat('?')) s.push_back(Shape::kUnknown);
    else s.push_back(c.integer("a dim"));
  } while (c.eat(','));
  c.expect(']', "after a shape");
  return s;
}

// One attribute text split into `key=value` items at top-level commas (brackets, parentheses
// and quotes nest; `range=[0, 1)` is one item).
std::vector<std::pair<std::string, std::string>> split_attrs(std::string_view text, const Cursor& where) {
  std::vector<std::pair<std::string, std::string>> items;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  auto flush = [&](size_t end) {
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) where.fail("an empty attribute");
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) items.emplace_back(std::string(item), "");
    else items.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '(') {
      ++depth;
    } else if (c == ']' || c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      flush(i);
      start = i + 1;
    }
  }
  if (!text.empty()) flush(text.size());
  return items;
}

Tensor parse_constant(const std::string& text, const TensorType& type, Cursor& c);

// A TensorArray constant (printer.cpp's list_constant_text):
// "tensor_array(size=2, dynamic_size=1, infer_shape=1[, element_shape=[3], values=[...]])".
Tensor parse_list_constant(const std::string& text, const TensorType& type, Cursor& c) {
  if (!text.starts_with("tensor_array(") || text.back() != ')')
    c.fail("a TensorArray constant is tensor_array(size=..., dynamic_size=..., infer_shape=...)");
  std::map<std::string, std::string> fields;
  for (auto& [key, value] : split_attrs(std::string_view(text).substr(13, text.size() - 14), c)) fields[key] = value;
  if (fields.count("elements of their own shapes"))
    c.fail("a TensorArray constant whose elements have their own shapes cannot be read back");
  for (const char* key : {"size", "dynamic_size", "infer_shape"})
    if (!fields.count(key)) c.fail(fmt::format("the TensorArray constant needs its '{}'", key));
  auto* list = new detail::TensorList;
  Tensor handle = detail::make_list_tensor(list);  // owns the list from here on
  list->elem_dtype = type.elem_dtype;
  list->dynamic_size = fields["dynamic_size"] == "1";
  list->infer_shape = fields["infer_shape"] == "1";
  const int64_t size = std::strtoll(fields["size"].c_str(), nullptr, 10);
  if (size < 0) c.fail("a TensorArray's size is >= 0");
  if (fields.count("element_shape")) {
    Cursor shape_text(fields["element_shape"], c.line());
    list->elem_shape = parse_shape(shape_text);
    list->elem_shape_known = true;
  }
  list->resize(size);
  if (fields.count("values")) {
    if (!list->elem_shape_known) c.fail("a TensorArray constant's values need its element_shape");
    Shape stacked = list->elem_shape;
    stacked.insert(0, size);
    const Tensor values = parse_constant(fields["values"], TensorType{type.elem_dtype, stacked}, c);
    std::memcpy(list->data.data(), detail::impl_of(values)->data, list->data.size());
  }
  return handle;
}

// A Const's value: tf.print's text ("[[1 2] [3 4]]", "2.5", "nan"), as many elements as the
// node's type holds.
Tensor parse_constant(const std::string& text, const TensorType& type, Cursor& c) {
  if (type.dtype == DType::List) return parse_list_constant(text, type, c);
  if (type.rank_unknown) c.fail("a constant must have a type of known rank");
  for (int64_t d : type.shape)
    if (d < 0) c.fail("a constant's type cannot have unknown dims");
  if (text.find("...") != std::string::npos)
    c.fail("the constant's value is elided (\"...\"): print the graph with ConstantText::Full to read it back");
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t k = 0;
  while (k < text.size()) {
    if (text[k] == '[' || text[k] == ']' || text[k] == ' ') {
      ++k;
      continue;
    }
    size_t end = k;
    while (end < text.size() && text[end] != ' ' && text[end] != ']' && text[end] != '[') ++end;
    const std::string token = text.substr(k, end - k);
    char* stop = nullptr;
    if (type.dtype == DType::Float32 || type.dtype == DType::Float64) f.push_back(std::strtod(token.c_str(), &stop));
    else i.push_back(token == "true" ? 1 : token == "false" ? 0 : std::strtoll(token.c_str(), &stop, 10));
    if (stop && *stop != '\0') c.fail(fmt::format("'{}' is not a {} value", token, dtype_name(type.dtype)));
    k = end;
  }
  const size_t count = f.size() + i.size();
  if (static_cast<int64_t>(count) != type.shape.num_elements())
    c.fail(fmt::format("the constant has {} values; its type {} holds {}", count, type.str(), type.shape.num_elements()));
  return detail::constant_from(type.dtype, type.shape, f.empty() ? nullptr : f.data(), i.empty() ? nullptr : i.data());
}

double parse_double(const std::string& text, Cursor& c) {
  char* stop = nullptr;
  const double v = std::strtod(text.c_str(), &stop);
  if (text.empty() || *stop != '\0') c.fail(fmt::format("'{}' is not a number", text));
  return v;
}

int64_t parse_int(const std::string& text, Cursor& c) {
  char* stop = nullptr;
  const long long v = std::strtoll(text.c_str(), &stop, 10);
  if (text.empty() || *stop != '\0') c.fail(fmt::format("'{}' is not an integer", text));
  return v;
}

Shape parse_shape_text(const std::string& text, const Cursor& c) {
  Cursor sub(text, c.line());
  Shape s = parse_shape(sub);
  sub.expect_end();
  return s;
}

std::string parse_quoted_text(const std::string& text, const Cursor& c) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') c.fail("expected a quoted string, found " + text);
  std::string s;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '\\' && i + 2 < text.size()) {
      ++i;
      s += text[i] == 'n' ? '\n' : text[i];
    } else {
      s += text[i];
    }
  }
  return s;
}

// A `format=["x is", %]` list: the text pieces and the mask of tensor positions.
void parse_print_format(const std::string& text, Attrs& a, const Cursor& c) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') c.fail("a print format is a [...] list");
  std::vector<int64_t> mask;
  for (const auto& [item, unused] : split_attrs(std::string_view(text).substr(1, text.size() - 2), c)) {
    if (item == "%") {
      mask.push_back(1);
    } else {
      mask.push_back(0);
      a.strings.push_back(parse_quoted_text(item, c));
    }
  }
  a.tensor_mask() = Shape(mask);
}

// A graph's or sub-graph's header: its parameters (text id and type, in order) and result types.
struct Signature {
  std::vector<std::pair<int64_t, TensorType>> params;
  std::vector<TensorType> results;
};

class Parser {
 public:
  Parser(std::string_view text, const GraphTextVariables& variables) : variables_(variables) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  std::vector<Graph> all() {
    std::vector<Graph> graphs;
    while (next_line()) {
      Cursor c = cursor();
      if (!c.eat("graph")) c.fail("expected 'graph', found " + c.found());
      Graph g;
      g.name = std::string(c.until('('));
      while (!g.name.empty() && g.name.back() == ' ') g.name.pop_back();
      if (g.name.empty()) c.fail("a graph needs a name");
      const Signature sig = signature(c);
      ++line_;
      body(g, sig);
      graphs.push_back(std::move(g));
    }
    return graphs;
  }

 private:
  // Skips blank lines and `//` comments; false at the end of the text.
  bool next_line() {
    for (; line_ < lines_.size(); ++line_) {
      std::string_view l = lines_[line_];
      while (!l.empty() && (l.front() == ' ' || l.front() == '\t' || l.front() == '\r')) l.remove_prefix(1);
      if (!l.empty() && !l.starts_with("//")) return true;
    }
    return false;
  }
  Cursor cursor() const { return Cursor(lines_[line_], static_cast<int>(line_ + 1)); }
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(fmt::format("graph text:{}: {}", std::min(line_, lines_.size() - 1) + 1, what));
  }

  // "(%0: f32[4], %1: i32[]) -> (f32[4]) {"
  Signature signature(Cursor& c) {
    Signature sig;
    c.expect('(', "to start the parameters");
    if (!c.eat(')')) {
      do {
        c.expect('%', "before a parameter id");
        const int64_t id = c.integer("a parameter id");
        c.expect(':', "after a parameter id");
        sig.params.emplace_back(id, parse_type(c));
      } while (c.eat(','));
      c.expect(')', "after the parameters");
    }
    if (!c.eat("->")) c.fail("expected '->' after the parameters, found " + c.found());
    c.expect('(', "to start the result types");
    if (!c.eat(')')) {
      do sig.results.push_back(parse_type(c));
      while (c.eat(','));
      c.expect(')', "after the result types");
    }
    c.expect('{', "to start the body");
    c.expect_end();
    return sig;
  }

  // The nodes of one graph, as they are read: text ids to node indices, and where the
  // parameters (whose lines the printer omits) take their places among the nodes, by their ids.
  struct Scope {
    Graph& g;
    std::vector<std::pair<int64_t, TensorType>> params;  // sorted by text id
    size_t next_param = 0;
    std::map<int64_t, uint32_t> ids;
    int64_t last_id = -1;
  };

  void place_param(Scope& s) {
    const auto& [text_id, type] = s.params[s.next_param++];
    if (s.ids.count(text_id)) fail(fmt::format("%{} is defined twice", text_id));
    Node n;
    n.op = OpKind::Placeholder;
    n.outputs = {type};
    s.ids[text_id] = static_cast<uint32_t>(s.g.nodes.size());
    s.g.nodes.push_back(std::move(n));
    s.last_id = std::max(s.last_id, text_id);
  }

  // The nodes up to `return`, then the closing `}` (consumed).
  void body(Graph& g, const Signature& sig) {
    Scope s{g, sig.params, 0, {}, -1};
    std::sort(s.params.begin(), s.params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (;;) {
      if (!next_line()) fail(fmt::format("graph '{}' has no 'return'", g.name));
      Cursor c = cursor();
      if (c.eat("return")) {
        while (s.next_param < s.params.size()) place_param(s);
        if (!c.at_end()) {
          do g.results.push_back(value(c, s));
          while (c.eat(','));
        }
        c.expect_end();
        ++line_;
        break;
      }
      node_line(c, s);
    }
    for (size_t i = 0; i < sig.params.size(); ++i) {
      const uint32_t node = s.ids.at(sig.params[i].first);
      g.nodes[node].attrs.param_index() = static_cast<int64_t>(i);
      g.params.push_back(node);
    }
    if (!next_line()) fail(fmt::format("graph '{}' is not closed by '}}'", g.name));
    Cursor close = cursor();
    close.expect('}', "to close the graph");
    close.expect_end();
    ++line_;
    if (sig.results.size() != g.results.size())
      fail(fmt::format("graph '{}' declares {} results and returns {}", g.name, sig.results.size(), g.results.size()));
    for (size_t i = 0; i < sig.results.size(); ++i)
      if (!(sig.results[i] == g.type(g.results[i])))
        fail(fmt::format("graph '{}': result {} is declared {} but is {}", g.name, i, sig.results[i].str(),
                         g.type(g.results[i]).str()));
  }

  ValueId value(Cursor& c, const Scope& s) {
    c.skip_spaces();
    const size_t at = c.pos();
    c.expect('%', "before a value");
    const int64_t id = c.integer("a value id");
    auto it = s.ids.find(id);
    if (it == s.ids.end()) c.fail_at(at, fmt::format("%{} is not defined before this line", id));
    ValueId v{it->second, 0};
    const size_t outputs = s.g.nodes[v.node].outputs.size();
    if (c.eat('#')) v.index = static_cast<uint32_t>(c.integer("an output index"));
    else if (outputs > 1) c.fail(fmt::format("%{} has {} outputs: name one as %{}#i", id, outputs, id));
    if (v.index >= outputs) c.fail(fmt::format("%{} has no output {}", id, v.index));
    return v;
  }

  void node_line(Cursor& c, Scope& s) {
    std::optional<int64_t> text_id;
    size_t num_outputs = 0;
    if (c.eat('%')) {
      text_id = c.integer("a node id");
      num_outputs = 1;
      if (c.eat(':')) num_outputs = static_cast<size_t>(c.integer("an output count"));
      c.expect('=', "after the node id");
    }
    // Parameters with smaller ids come first; a node without results has no id in the text and
    // takes the next free one.
    if (text_id) {
      while (s.next_param < s.params.size() && s.params[s.next_param].first < *text_id) place_param(s);
      if (s.ids.count(*text_id)) c.fail(fmt::format("%{} is defined twice", *text_id));
      if (*text_id <= s.last_id) c.fail(fmt::format("%{} does not follow %{}: ids increase down the graph", *text_id, s.last_id));
    } else {
      while (s.next_param < s.params.size() && s.params[s.next_param].first <= s.last_id + 1) place_param(s);
    }
    const int64_t own_id = text_id ? *text_id : s.last_id + 1;

    Node n;
    c.skip_spaces();
    const size_t op_at = c.pos();
    const std::string_view name = c.ident();
    const auto op = op_named(name);
    if (!op) c.fail_at(op_at, fmt::format("'{}' is not an op", name.empty() ? c.found() : std::string(name)));
    if (*op == OpKind::Placeholder) c.fail("a Placeholder is a parameter: declare it in the graph's header");
    n.op = *op;
    c.expect('(', "after the op name");
    if (!c.eat(')')) {
      do n.inputs.push_back(value(c, s));
      while (c.eat(','));
      c.expect(')', "after the inputs");
    }
    std::string_view attrs;
    if (c.eat('{')) attrs = c.braced();
    if (c.eat(':')) {
      if (c.eat('(')) {
        do n.outputs.push_back(parse_type(c));
        while (c.eat(','));
        c.expect(')', "after the output types");
      } else {
        n.outputs.push_back(parse_type(c));
      }
    }
    if (n.outputs.size() != num_outputs)
      c.fail(fmt::format("the node has {} output types; its id says {}", n.outputs.size(), num_outputs));
    if (c.eat('#')) {
      const std::string_view loc = c.rest();
      const size_t colon = loc.rfind(':');
      if (colon == std::string_view::npos || colon == 0) c.fail("a location is file:line");
      Cursor line_number(loc.substr(colon + 1), c.line());
      const int64_t line = line_number.integer("a line number");
      line_number.expect_end();
      n.loc = SourceLoc(interned_file_name(std::string(loc.substr(0, colon))), static_cast<uint32_t>(line));
    } else {
      c.expect_end();
    }
    set_attrs(n, split_attrs(attrs, c), c);
    ++line_;
    for (size_t i = 0; i < subgraph_count(n.op); ++i) n.subgraphs.push_back(subgraph(n.op, i));
    s.ids[own_id] = static_cast<uint32_t>(s.g.nodes.size());
    s.last_id = own_id;
    s.g.nodes.push_back(std::move(n));
  }

  std::shared_ptr<const Graph> subgraph(OpKind op, size_t i) {
    if (!next_line()) fail(fmt::format("the {} expects its '{}' sub-graph", op_name(op), subgraph_keyword(op, i)));
    Cursor c = cursor();
    if (!c.eat(subgraph_keyword(op, i)))
      c.fail(fmt::format("expected the {}'s '{}' sub-graph, found {}", op_name(op), subgraph_keyword(op, i), c.found()));
    auto g = std::make_shared<Graph>();
    g->name = subgraph_keyword(op, i);
    const Signature sig = signature(c);
    ++line_;
    body(*g, sig);
    return g;
  }

  void set_attrs(Node& n, const std::vector<std::pair<std::string, std::string>>& items, Cursor& c) {
    Attrs& a = n.attrs;
    std::set<std::string> seen;
    for (const auto& [key, text] : items) {
      if (!seen.insert(key).second) c.fail(fmt::format("attribute '{}' is given twice", key));
      const bool reduce = op_class(n.op) == OpClass::Reduce;
      if (key == "value" && n.op == OpKind::Const) {
        if (n.outputs.size() != 1) c.fail("a Const has one output");
        a.value = parse_constant(text, n.outputs[0], c);
      } else if (key == "value" && n.op == OpKind::FillLike) {
        a.scalar = parse_double(text, c);
      } else if (key == "dtype" && n.op == OpKind::Cast) {
        const auto d = dtype_named(text);
        if (!d) c.fail(fmt::format("'{}' is not a dtype", text));
        a.dtype = *d;
      } else if (key == "shape" && (n.op == OpKind::Fill || n.op == OpKind::Reshape || n.op == OpKind::EnsureShape ||
                                    n.op == OpKind::ListStack || n.op == OpKind::RandomUniform ||
                                    n.op == OpKind::RandomNormal)) {
        a.shape = parse_shape_text(text, c);
      } else if (key == "perm" && n.op == OpKind::Transpose) {
        a.perm() = parse_shape_text(text, c);
      } else if (key == "begin" && n.op == OpKind::Slice) {
        a.slice_begin() = parse_shape_text(text, c);
      } else if (key == "size" && n.op == OpKind::Slice) {
        a.slice_size() = parse_shape_text(text, c);
      } else if (key == "axes" && (reduce || n.op == OpKind::Squeeze)) {
        a.axes() = parse_shape_text(text, c);
      } else if (key == "keepdims" && reduce && text.empty()) {
        a.keepdims = true;
      } else if (key == "axis" && (n.op == OpKind::Concat || n.op == OpKind::Gather || n.op == OpKind::ExpandDims ||
                                   n.op == OpKind::ArgMax || n.op == OpKind::ArgMin)) {
        a.axis = parse_int(text, c);
      } else if (key == "loop_vars" && n.op == OpKind::While) {
        a.loop_vars() = parse_int(text, c);
      } else if (key == "counts" && n.op == OpKind::CustomGradient) {
        a.ints = parse_shape_text(text, c);
      } else if ((key == "var" && (n.op == OpKind::ReadVariable || n.op == OpKind::AssignVariable ||
                                   n.op == OpKind::AssignAddVariable || n.op == OpKind::AssignSubVariable)) ||
                 (key == "state" && (n.op == OpKind::RandomUniform || n.op == OpKind::RandomNormal))) {
        a.variable = variable(text, c);
      } else if (key == "range" && n.op == OpKind::RandomUniform) {
        // [minval, maxval)
        if (text.size() < 2 || text.front() != '[' || text.back() != ')') c.fail("a range is [min, max)");
        const auto bounds = split_attrs(std::string_view(text).substr(1, text.size() - 2), c);
        if (bounds.size() != 2) c.fail("a range is [min, max)");
        a.scalar = parse_double(bounds[0].first, c);
        a.scalar2 = parse_double(bounds[1].first, c);
      } else if (key == "mean" && n.op == OpKind::RandomNormal) {
        a.scalar = parse_double(text, c);
      } else if (key == "stddev" && n.op == OpKind::RandomNormal) {
        a.scalar2 = parse_double(text, c);
      } else if (key == "message" && n.op == OpKind::Assert) {
        a.strings.resize(2);
        a.strings[0] = parse_quoted_text(text, c);
      } else if (key == "what" && n.op == OpKind::Assert) {
        a.strings.resize(2);
        a.strings[1] = parse_quoted_text(text, c);
      } else if (key == "format" && n.op == OpKind::Print) {
        parse_print_format(text, a, c);
      } else {
        c.fail(fmt::format("{} has no attribute '{}'", op_name(n.op), key));
      }
    }
    // What the printer leaves out because the node's types say it.
    switch (n.op) {
      case OpKind::Fill:
      case OpKind::FillLike:
      case OpKind::Range:
      case OpKind::RandomUniform:
      case OpKind::RandomNormal:
        if (!n.outputs.empty()) a.dtype = n.outputs[0].dtype;
        break;
      default: break;
    }
    const auto require = [&](bool present, const char* key) {
      if (!present) c.fail(fmt::format("{} needs its '{}' attribute", op_name(n.op), key));
    };
    if (n.op == OpKind::Const) require(a.value.has_value(), "value");
    if (n.op == OpKind::Cast) require(seen.count("dtype"), "dtype");
    if (n.op == OpKind::Assert) require(seen.count("message"), "message");
    if (n.op == OpKind::While) require(seen.count("loop_vars"), "loop_vars");
    if (n.op == OpKind::Transpose) require(seen.count("perm"), "perm");
    if (n.op == OpKind::Slice) require(seen.count("begin") && seen.count("size"), "begin' and 'size");
    if (n.op == OpKind::Reshape || n.op == OpKind::EnsureShape || n.op == OpKind::Fill) require(seen.count("shape"), "shape");
    if (n.op == OpKind::RandomUniform || n.op == OpKind::RandomNormal) require(seen.count("state") && seen.count("shape"), "state' and 'shape");
    if (n.op == OpKind::ReadVariable || n.op == OpKind::AssignVariable || n.op == OpKind::AssignAddVariable ||
        n.op == OpKind::AssignSubVariable)
      require(a.variable != nullptr, "var");
    if (n.op == OpKind::Print && !seen.count("format")) a.tensor_mask() = Shape(std::vector<int64_t>(n.inputs.size(), 1));
  }

  // "variable 'w' (float32[2])" or "variable #3 (float32[2])".
  std::shared_ptr<detail::VariableState> variable(const std::string& text, Cursor& c) {
    if (auto it = variable_states_.find(text); it != variable_states_.end()) return it->second;
    const size_t open = text.rfind(" (");
    if (!text.starts_with("variable ") || open == std::string::npos || text.back() != ')')
      c.fail(fmt::format("'{}' does not name a variable (variable 'w' (float32[2]), variable #3 (int64[2]))", text));
    Cursor type_text(std::string_view(text).substr(open + 2, text.size() - open - 3), c.line());
    const std::string_view dtype_word = type_text.ident();
    const auto dtype = dtype_named(dtype_word);
    if (!dtype) c.fail(fmt::format("'{}' is not a dtype", dtype_word));
    const Shape shape = parse_shape(type_text);
    type_text.expect_end();
    for (int64_t d : shape)
      if (d < 0) c.fail("a variable's shape is fully known");
    std::shared_ptr<detail::VariableState> state;
    if (variables_) {
      state = variables_(text, *dtype, shape);
      if (!state || state->dtype != *dtype || !(state->shape == shape))
        c.fail(fmt::format("no variable of type {}{} for '{}'", dtype_name(*dtype), shape.str(), text));
    } else {
      state = std::make_shared<detail::VariableState>();
      state->dtype = *dtype;
      state->shape = shape;
      state->value = zeros(shape, *dtype);
      state->id = detail::new_variable_id();
      const std::string_view what = std::string_view(text).substr(9, open - 9);
      if (what.size() >= 2 && what.front() == '\'' && what.back() == '\'') state->name = std::string(what.substr(1, what.size() - 2));
    }
    variable_states_[text] = state;
    return state;
  }

  const GraphTextVariables& variables_;
  std::vector<std::string_view> lines_;
  size_t line_ = 0;
  std::map<std::string, std::shared_ptr<detail::VariableState>> variable_states_;
};

}  // namespace

std::vector<Graph> graphs_from_text(std::string_view text, const GraphTextVariables& variables) {
  std::vector<Graph> graphs = Parser(text, variables).all();
  for (const Graph& g : graphs) {
    try {
      verify_graph(g);
    } catch (const InternalError& e) {
      // The verifier's checks, on the user's text: an error in the input, not in agc.
      throw ValueError(std::string("graph text: ") + e.what());
    }
  }
  return graphs;
}

Graph graph_from_text(std::string_view text, const GraphTextVariables& variables) {
  std::vector<Graph> graphs = graphs_from_text(text, variables);
  if (graphs.size() != 1) throw ValueError(fmt::format("graph text: expected one graph, found {}", graphs.size()));
  return std::move(graphs[0]);
}

}  // namespace ag
