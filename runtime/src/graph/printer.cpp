// Graph text and DOT printers.
#include "ag/graph/printer.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "ag/detail/tensor_list.h"
#include "ag/distribute.h"
#include "ag/detail/variable_state.h"
#include "ag/print.h"
#include "../ops/window/window_geometry.h"

namespace ag {
namespace {

// What a control node's sub-graph `i` is: an If's then/else, a While's cond/body, a custom
// gradient's gradient.
const char* subgraph_name(OpKind op, size_t i) {
  if (op == OpKind::If) return i ? "else" : "then";
  if (op == OpKind::While) return i ? "body" : "cond";
  return "gradient";
}

std::string value_name(const Graph& g, ValueId v) {
  // Robust to malformed graphs: the verifier prints the graph it rejects.
  if (v.node >= g.nodes.size()) return fmt::format("%{}<missing>", v.node);
  if (g.nodes[v.node].outputs.size() > 1) return fmt::format("%{}#{}", v.node, v.index);
  return fmt::format("%{}", v.node);
}

std::string types_text(const Node& n) {
  if (n.outputs.size() == 1) return n.outputs[0].str();
  std::string s = "(";
  for (size_t i = 0; i < n.outputs.size(); ++i) s += (i ? ", " : "") + n.outputs[i].str();
  return s + ")";
}

std::string params_text(const Graph& g) {
  std::string s;
  for (size_t i = 0; i < g.params.size(); ++i) {
    const uint32_t p = g.params[i];
    const bool valid = p < g.nodes.size() && !g.nodes[p].outputs.empty();
    s += fmt::format("{}%{}: {}", i ? ", " : "", p, valid ? g.nodes[p].outputs[0].str() : std::string("<missing>"));
  }
  return s;
}

std::string results_text(const Graph& g) {
  std::string s;
  for (size_t i = 0; i < g.results.size(); ++i) {
    const ValueId r = g.results[i];
    const bool valid = r.node < g.nodes.size() && r.index < g.nodes[r.node].outputs.size();
    s += (i ? ", " : "") + (valid ? g.type(r).str() : std::string("<missing>"));
  }
  return s;
}

// How one text is printed: with a backend's notes, constants short or in full.
struct TextStyle {
  const GraphNotes* notes = nullptr;
  ConstantText constants = ConstantText::Short;
};

void print_graph(const Graph& g, int indent, const TextStyle& style, std::string& out);

void print_node(const Graph& g, uint32_t id, int indent, const TextStyle& style, std::string& out) {
  const GraphNotes* notes = style.notes;
  const Node& n = g.nodes[id];
  if (n.op == OpKind::Placeholder) return;
  const std::string pad(indent, ' ');
  std::string line = pad;
  if (n.outputs.size() == 1) line += fmt::format("%{} = ", id);
  else if (n.outputs.size() > 1) line += fmt::format("%{}:{} = ", id, n.outputs.size());
  line += std::string(op_name(n.op)) + "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) line += (i ? ", " : "") + value_name(g, n.inputs[i]);
  line += ")";
  const std::string attrs = attrs_to_text(n, style.constants);
  if (!attrs.empty()) line += " " + attrs;
  if (!n.outputs.empty()) line += " : " + types_text(n);
  if (notes && notes->text)
    if (const std::string note = notes->text(g, id); !note.empty()) line += "  [" + note + "]";
  if (n.loc.known()) line = fmt::format("{:<56}  # {}", line, n.loc.str());
  out += line + "\n";
  for (size_t i = 0; i < n.subgraphs.size(); ++i) {
    const Graph& sub = *n.subgraphs[i];
    out += fmt::format("{}  {} ({}) -> ({}) {{\n", pad, subgraph_name(n.op, i), params_text(sub), results_text(sub));
    print_graph(sub, indent + 4, style, out);
    out += pad + "  }\n";
  }
}

void print_graph(const Graph& g, int indent, const TextStyle& style, std::string& out) {
  for (uint32_t i = 0; i < g.nodes.size(); ++i) print_node(g, i, indent, style, out);
  std::string ret = std::string(indent, ' ') + "return";
  for (size_t i = 0; i < g.results.size(); ++i) ret += (i ? ", " : " ") + value_name(g, g.results[i]);
  out += ret + "\n";
}

// A TensorArray constant in full: its flags and size, and its elements when they share a known
// shape ("tensor_array(size=2, dynamic_size=1, infer_shape=1, element_shape=[3], values=[...])").
std::string list_constant_text(const Tensor& t) {
  const detail::TensorList& l = detail::list_of(t);
  std::string s = fmt::format("tensor_array(size={}, dynamic_size={:d}, infer_shape={:d}", l.size, l.dynamic_size, l.infer_shape);
  if (!l.infer_shape && l.size > 0) return s + ", elements of their own shapes)";  // not readable back
  if (l.elem_shape_known) {
    Shape stacked = l.elem_shape;
    stacked.insert(0, l.size);
    Tensor values = detail::make_tensor(l.elem_dtype, stacked);
    if (!l.data.empty()) std::memcpy(detail::impl_of(values)->data, l.data.data(), l.data.size());
    std::string v = detail::format_all_values(values);
    for (char& c : v)
      if (c == '\n') c = ' ';
    s += ", element_shape=" + l.elem_shape.str() + ", values=" + v;
  }
  return s + ")";
}

std::string constant_text(const Tensor& t, ConstantText constants) {
  if (t.has_value() && !t.is_symbolic() && t.dtype() == DType::List && constants == ConstantText::Full)
    return list_constant_text(t);
  std::string v = constants == ConstantText::Full ? detail::format_all_values(t) : detail::format_values(t);
  for (char& c : v)
    if (c == '\n') c = ' ';
  if (constants == ConstantText::Short && v.size() > 40) v = v.substr(0, 37) + "...";
  return v;
}

// A string attribute in double quotes, with `"`, `\` and newlines escaped (parser.cpp reads it).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

}  // namespace

std::string attrs_to_text(const Node& n, ConstantText constants) {
  std::vector<std::string> parts;
  const Attrs& a = n.attrs;
  switch (n.op) {
    case OpKind::Const: parts.push_back("value=" + constant_text(a.value, constants)); break;
    case OpKind::Placeholder:
      if (!a.strings.empty()) parts.push_back("name=" + quoted(a.strings[0]));
      break;
    case OpKind::Cast: parts.push_back(fmt::format("dtype={}", dtype_name(a.dtype))); break;
    case OpKind::Fill: parts.push_back("shape=" + a.shape.str()); break;
    case OpKind::FillLike: parts.push_back(fmt::format("value={}", a.scalar)); break;
    case OpKind::Transpose: parts.push_back("perm=" + a.perm().str()); break;
    case OpKind::MatMul:
      if (a.transpose_a()) parts.push_back("transpose_a");
      if (a.transpose_b()) parts.push_back("transpose_b");
      break;
    case OpKind::Reshape:
    case OpKind::EnsureShape: parts.push_back("shape=" + a.shape.str()); break;
    case OpKind::Slice: parts.push_back("begin=" + a.slice_begin().str() + ", size=" + a.slice_size().str()); break;
    case OpKind::SliceUpdate: parts.push_back("begin=" + a.slice_begin().str()); break;
    case OpKind::Cumsum:
    case OpKind::Cumprod:
      parts.push_back("axis=" + std::to_string(a.axis));
      if (a.scan_flags()[0]) parts.push_back("exclusive");
      if (a.scan_flags()[1]) parts.push_back("reverse");
      break;
    case OpKind::Squeeze: parts.push_back("axes=" + a.axes().str()); break;
    case OpKind::ArgSort:
      parts.push_back(fmt::format("axis={}", a.axis));
      if (a.sort_flags()[0]) parts.push_back("descending");
      break;
    case OpKind::TakeAlongAxis:
    case OpKind::TakeAlongAxisGrad: parts.push_back(fmt::format("axis={}", a.axis)); break;
    case OpKind::Conv2D:
    case OpKind::FusedConv2D:
    case OpKind::Conv2DBackpropInput:
    case OpKind::Conv2DBackpropFilter:
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::MaxPoolGrad:
    case OpKind::MaxPoolGradGrad:
    case OpKind::AvgPoolGrad: {
      const Shape& w = a.window();
      const bool conv = detail::is_conv(n.op);
      parts.push_back((conv ? "strides=" : "ksize=") + Shape{w[0], w[1]}.str());
      parts.push_back((conv ? "dilations=" : "strides=") + Shape{w[2], w[3]}.str());
      parts.push_back(a.padding() ? "padding=SAME" : "padding=VALID");
      if (n.op == OpKind::Conv2DBackpropInput && n.inputs.size() == 2) parts.push_back("shape=" + a.shape.str());
      if (n.op == OpKind::FusedConv2D && a.fused_relu()) parts.push_back("relu");
      break;
    }
    case OpKind::Concat:
    case OpKind::Gather:
    case OpKind::ExpandDims:
    case OpKind::ArgMax:
    case OpKind::ArgMin: parts.push_back(fmt::format("axis={}", a.axis)); break;
    case OpKind::While:
      parts.push_back(fmt::format("loop_vars={}", a.loop_vars()));
      if (a.per_element()) parts.push_back("per_element");
      break;
    case OpKind::ReadVariable:
    case OpKind::AssignVariable:
    case OpKind::AssignAddVariable:
    case OpKind::AssignSubVariable: parts.push_back("var=" + a.variable->describe()); break;
    case OpKind::RandomUniform:
    case OpKind::RandomNormal:
      parts.push_back("state=" + a.variable->describe());
      parts.push_back("shape=" + a.shape.str());
      parts.push_back(n.op == OpKind::RandomUniform ? fmt::format("range=[{}, {})", a.scalar, a.scalar2)
                                                    : fmt::format("mean={}, stddev={}", a.scalar, a.scalar2));
      break;
    case OpKind::Assert:
      parts.push_back("message=" + quoted(a.strings.at(0)));
      if (a.strings.size() > 1 && !a.strings[1].empty()) parts.push_back("what=" + quoted(a.strings[1]));
      break;
    case OpKind::PureCallback:
    case OpKind::IoCallback: parts.push_back("callback"); break;
    case OpKind::AllReduce:
      parts.push_back(fmt::format("reduce={}", distribute::reduce_op_name(static_cast<distribute::ReduceOp>(a.axis))));
      break;
    case OpKind::CollectiveBroadcast: parts.push_back(fmt::format("root={}", a.axis)); break;
    case OpKind::AllGather: parts.push_back(fmt::format("processes={}", a.axis)); break;
    case OpKind::CheckNumerics:
      if (!a.strings.empty() && !a.strings[0].empty()) parts.push_back("message=" + quoted(a.strings[0]));
      if (a.strings.size() > 1 && !a.strings[1].empty()) parts.push_back("op=" + quoted(a.strings[1]));
      break;
    case OpKind::ListStack: parts.push_back("shape=" + a.shape.str()); break;
    case OpKind::CustomGradient: parts.push_back("counts=" + a.ints.str()); break;
    case OpKind::Print: {
      std::string f = "format=[";
      size_t s = 0;
      for (int64_t i = 0; i < a.tensor_mask().rank(); ++i)
        f += (i ? ", " : "") + (a.tensor_mask()[i] ? std::string("%") : quoted(a.strings[s++]));
      parts.push_back(f + "]");
      break;
    }
    default:
      if (op_class(n.op) == OpClass::Reduce) {
        parts.push_back("axes=" + a.axes().str());
        if (a.keepdims) parts.push_back("keepdims");
      }
  }
  if (parts.empty()) return {};
  std::string s = "{";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + "}";
}

namespace {

std::string text_of(const Graph& g, const TextStyle& style) {
  std::string out = fmt::format("graph {}({}) -> ({}) {{\n", g.name.empty() ? "main" : g.name, params_text(g), results_text(g));
  print_graph(g, 2, style, out);
  return out + "}\n";
}

}  // namespace

std::string graph_to_text(const Graph& g, ConstantText constants) { return text_of(g, {nullptr, constants}); }
std::string graph_to_text(const Graph& g, const GraphNotes& notes) { return text_of(g, {&notes, ConstantText::Short}); }

namespace {

std::string dot_escape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void dot_graph(const Graph& g, const std::string& prefix, const GraphNotes* notes, std::string& out, int depth) {
  const std::string pad(depth * 2 + 2, ' ');
  std::map<std::string, std::vector<uint32_t>> clusters;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::string label = std::string(op_name(n.op));
    if (n.op == OpKind::Placeholder && !n.attrs.strings.empty()) label += " " + n.attrs.strings[0];
    const std::string attrs = attrs_to_text(n);
    if (!attrs.empty() && n.op != OpKind::Placeholder) label += "\\n" + dot_escape(attrs);
    if (!n.outputs.empty()) label += "\\n" + dot_escape(n.outputs.size() == 1 ? n.outputs[0].str() : "multi");
    const char* shape = n.op == OpKind::Placeholder ? "invhouse" : n.op == OpKind::Const ? "note" : "box";
    out += fmt::format("{}{}n{} [label=\"{}\", shape={}];\n", pad, prefix, i, label, shape);
    if (notes && notes->cluster)
      if (std::string c = notes->cluster(g, i); !c.empty()) clusters[std::move(c)].push_back(i);
    for (ValueId in : n.inputs) out += fmt::format("{}{}n{} -> {}n{};\n", pad, prefix, in.node, prefix, i);
    for (size_t s = 0; s < n.subgraphs.size(); ++s) {
      const std::string sub = fmt::format("{}n{}s{}_", prefix, i, s);
      out += fmt::format("{}subgraph cluster_{} {{\n{}  label=\"{} {}\"; style=dashed;\n", pad, sub, pad, op_name(n.op),
                         subgraph_name(n.op, s));
      dot_graph(*n.subgraphs[s], sub, notes, out, depth + 1);
      out += pad + "}\n";
      out += fmt::format("{}{}n{} -> {}ret [style=dotted];\n", pad, prefix, i, sub);
    }
  }
  size_t k = 0;
  for (const auto& [name, members] : clusters) {
    out += fmt::format("{}subgraph cluster_{}note{} {{\n{}  label=\"{}\"; style=filled; color=lightblue;\n", pad, prefix,
                       k++, pad, dot_escape(name));
    for (uint32_t m : members) out += fmt::format("{}  {}n{};\n", pad, prefix, m);
    out += pad + "}\n";
  }
  out += fmt::format("{}{}ret [label=\"return\", shape=house];\n", pad, prefix);
  for (ValueId r : g.results) out += fmt::format("{}{}n{} -> {}ret;\n", pad, prefix, r.node, prefix);
}

std::string dot_of(const Graph& g, const GraphNotes* notes) {
  std::string out = fmt::format("digraph \"{}\" {{\n  node [fontname=\"monospace\"];\n", dot_escape(g.name));
  dot_graph(g, "", notes, out, 0);
  return out + "}\n";
}

}  // namespace

std::string graph_to_dot(const Graph& g) { return dot_of(g, nullptr); }
std::string graph_to_dot(const Graph& g, const GraphNotes& notes) { return dot_of(g, &notes); }

}  // namespace ag
