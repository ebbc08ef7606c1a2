// The line readers of the graph text parser (text_reader.h).
#include "text_reader.h"

#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "ag/construct.h"
#include "ag/detail/tensor_list.h"

namespace ag::graph_text {

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
  for (DType d : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64, DType::UInt8, DType::Int8,
                  DType::Float16, DType::BFloat16})
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


// `f32[2,?]`, `f32[*]`, `list<f32[?]>`, `list<f32[*], any shape>`.
static void parse_dims(Cursor& c, TensorType& t) {
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


// A TensorArray constant (printer.cpp's list_constant_text):
// "tensor_array(size=2, dynamic_size=1, infer_shape=1[, element_shape=[3], values=[...]])".
static Tensor parse_list_constant(const std::string& text, const TensorType& type, Cursor& c) {
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
    if (is_floating(type.dtype)) f.push_back(std::strtod(token.c_str(), &stop));
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

}  // namespace ag::graph_text
