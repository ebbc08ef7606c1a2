// The graph text parser: graph_to_text's form back into a Graph (recursive descent over lines).
#include "ag/graph/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ag/construct.h"
#include "ag/distribute.h"
#include "ag/detail/variable_state.h"
#include "ag/graph/verifier.h"
#include "../ops/window/window_geometry.h"
#include "text_reader.h"

namespace ag {
namespace {

using namespace graph_text;

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

  // A Window op's (height, width) pair: strides, dilations (convolutions) or ksize, strides
  // (pooling), into its slot of attrs.window() (ops/window/window_geometry.h).
  static void set_window_pair(Node& n, const std::string& key, const Shape& pair, Cursor& c) {
    if (pair.rank() != 2) c.fail(fmt::format("'{}' is [height, width]", key));
    const bool conv = detail::is_conv(n.op);
    if (key == (conv ? "ksize" : "dilations")) c.fail(fmt::format("{} has no attribute '{}'", op_name(n.op), key));
    const int slot = (conv ? key == "dilations" : key == "strides") ? 2 : 0;
    if (n.attrs.window().rank() != 4) n.attrs.window() = Shape{1, 1, 1, 1};
    n.attrs.window()[slot] = pair[0];
    n.attrs.window()[slot + 1] = pair[1];
  }

  static int64_t parse_reduce_op(const std::string& text, Cursor& c) {
    for (auto op : {distribute::ReduceOp::sum, distribute::ReduceOp::mean, distribute::ReduceOp::max, distribute::ReduceOp::min})
      if (text == distribute::reduce_op_name(op)) return static_cast<int64_t>(op);
    c.fail(fmt::format("'{}' is not a reduction (sum, mean, max, min)", text));
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
      } else if ((key == "transpose_a" || key == "transpose_b") && n.op == OpKind::MatMul && text.empty()) {
        a.set_transposes(key == "transpose_a" || a.transpose_a(), key == "transpose_b" || a.transpose_b());
      } else if (key == "perm" && n.op == OpKind::Transpose) {
        a.perm() = parse_shape_text(text, c);
      } else if (key == "begin" && (n.op == OpKind::Slice || n.op == OpKind::SliceUpdate)) {
        a.slice_begin() = parse_shape_text(text, c);
      } else if (key == "size" && n.op == OpKind::Slice) {
        a.slice_size() = parse_shape_text(text, c);
      } else if (key == "axes" && (reduce || n.op == OpKind::Squeeze)) {
        a.axes() = parse_shape_text(text, c);
      } else if (key == "keepdims" && reduce && text.empty()) {
        a.keepdims = true;
      } else if ((key == "exclusive" || key == "reverse") && op_class(n.op) == OpClass::Scan && text.empty()) {
        if (a.scan_flags().rank() != 2) a.scan_flags() = Shape{0, 0};
        a.scan_flags()[key == "exclusive" ? 0 : 1] = 1;
      } else if (key == "axis" && (n.op == OpKind::Concat || n.op == OpKind::Gather || n.op == OpKind::ExpandDims ||
                                   n.op == OpKind::ArgMax || n.op == OpKind::ArgMin || op_class(n.op) == OpClass::Scan ||
                                   n.op == OpKind::ArgSort || n.op == OpKind::TakeAlongAxis || n.op == OpKind::TakeAlongAxisGrad)) {
        a.axis = parse_int(text, c);
      } else if (op_class(n.op) == OpClass::Window && (key == "strides" || key == "dilations" || key == "ksize")) {
        set_window_pair(n, key, parse_shape_text(text, c), c);
      } else if (key == "relu" && n.op == OpKind::FusedConv2D && text.empty()) {
        a.fused_relu() = true;
      } else if (key == "padding" && op_class(n.op) == OpClass::Window) {
        if (text != "SAME" && text != "VALID") c.fail("padding is SAME or VALID");
        a.padding() = text == "SAME" ? 1 : 0;
      } else if (key == "shape" && n.op == OpKind::Conv2DBackpropInput) {
        a.shape = parse_shape_text(text, c);
      } else if (key == "descending" && n.op == OpKind::ArgSort && text.empty()) {
        a.sort_flags() = Shape{1};
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
      } else if (key == "message" && (n.op == OpKind::Assert || n.op == OpKind::CheckNumerics)) {
        a.strings.resize(2);
        a.strings[0] = parse_quoted_text(text, c);
      } else if ((key == "what" && n.op == OpKind::Assert) || (key == "op" && n.op == OpKind::CheckNumerics)) {
        a.strings.resize(2);
        a.strings[1] = parse_quoted_text(text, c);
      } else if (key == "reduce" && n.op == OpKind::AllReduce) {
        a.axis = parse_reduce_op(text, c);
      } else if ((key == "root" && n.op == OpKind::CollectiveBroadcast) || (key == "processes" && n.op == OpKind::AllGather)) {
        a.axis = parse_int(text, c);
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
    if (n.op == OpKind::CheckNumerics) a.strings.resize(2);  // both optional
    if (n.op == OpKind::PureCallback || n.op == OpKind::IoCallback)
      c.fail(fmt::format("{} holds a C++ function, which graph text cannot carry", op_name(n.op)));
    if (n.op == OpKind::While) require(seen.count("loop_vars"), "loop_vars");
    if (n.op == OpKind::ArgSort) {
      require(seen.count("axis"), "axis");
      if (a.sort_flags().rank() != 1) a.sort_flags() = Shape{0};
    }
    if (n.op == OpKind::TakeAlongAxis || n.op == OpKind::TakeAlongAxisGrad) require(seen.count("axis"), "axis");
    if (op_class(n.op) == OpClass::Window) {
      const bool conv = detail::is_conv(n.op);
      require(seen.count("strides") && seen.count(conv ? "dilations" : "ksize") && seen.count("padding"),
              conv ? "strides', 'dilations' and 'padding" : "ksize', 'strides' and 'padding");
      if (n.op == OpKind::Conv2DBackpropInput && n.inputs.size() == 2) require(seen.count("shape"), "shape");
    }
    if (n.op == OpKind::Transpose) require(seen.count("perm"), "perm");
    if (n.op == OpKind::Slice) require(seen.count("begin") && seen.count("size"), "begin' and 'size");
    if (n.op == OpKind::SliceUpdate) require(seen.count("begin"), "begin");
    if (op_class(n.op) == OpClass::Scan) {
      require(seen.count("axis"), "axis");
      if (a.scan_flags().rank() != 2) a.scan_flags() = Shape{0, 0};
    }
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
