// Graph verifier.
#include "ag/graph/verifier.h"

#include <fmt/format.h>

#include "ag/detail/ops_internal.h"
#include "ag/graph/printer.h"

namespace ag {
namespace {

[[noreturn]] void fail(const Graph& g, uint32_t node, const std::string& msg) {
  throw InternalError(fmt::format("graph verifier: {}: node %{}: {}\n{}", g.name, node, msg, graph_to_text(g)));
}

void check_types_match(const Graph& g, uint32_t id, const std::vector<TensorType>& expected,
                       const std::vector<TensorType>& actual, const char* what) {
  if (expected.size() != actual.size())
    fail(g, id, fmt::format("{}: {} values where {} were expected", what, actual.size(), expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i].dtype != actual[i].dtype ||
        (expected[i].shape.rank() != actual[i].shape.rank() && !expected[i].rank_unknown && !actual[i].is_untyped_list()))
      fail(g, id, fmt::format("{} {}: {} does not fit {}", what, i, actual[i].str(), expected[i].str()));
}

std::vector<TensorType> param_types(const Graph& g) {
  std::vector<TensorType> t;
  for (uint32_t p : g.params) t.push_back(g.nodes[p].outputs[0]);
  return t;
}
std::vector<TensorType> result_types(const Graph& g) {
  std::vector<TensorType> t;
  for (ValueId r : g.results) t.push_back(g.type(r));
  return t;
}

}  // namespace

void verify_graph(const Graph& g) {
  for (size_t i = 0; i < g.params.size(); ++i) {
    if (g.params[i] >= g.nodes.size() || g.nodes[g.params[i]].op != OpKind::Placeholder)
      fail(g, g.params[i], "a parameter is not a Placeholder");
    if (g.nodes[g.params[i]].attrs.param_index() != static_cast<int64_t>(i)) fail(g, g.params[i], "placeholder index mismatch");
  }
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    std::vector<TensorType> in;
    for (ValueId v : n.inputs) {
      if (v.node >= id) fail(g, id, fmt::format("input %{} does not come before the node", v.node));
      if (v.index >= g.nodes[v.node].outputs.size()) fail(g, id, fmt::format("input %{}#{} does not exist", v.node, v.index));
      in.push_back(g.type(v));
    }
    switch (n.op) {
      case OpKind::Placeholder:
        if (!n.inputs.empty()) fail(g, id, "a Placeholder has inputs");
        break;
      case OpKind::If: {
        if (n.subgraphs.size() != 2 || in.empty()) fail(g, id, "If needs a condition and two branches");
        if (in[0].dtype != DType::Bool || in[0].shape.rank() != 0) fail(g, id, "If condition is not a bool scalar");
        std::vector<TensorType> operands(in.begin() + 1, in.end());
        for (const auto& sub : n.subgraphs) {
          verify_graph(*sub);
          check_types_match(g, id, param_types(*sub), operands, "If operand");
          check_types_match(g, id, n.outputs, result_types(*sub), "If branch result");
        }
        break;
      }
      case OpKind::While: {
        if (n.subgraphs.size() != 2) fail(g, id, "While needs cond and body");
        const size_t loop_vars = static_cast<size_t>(n.attrs.loop_vars());
        if (loop_vars > in.size() || n.outputs.size() != loop_vars) fail(g, id, "While loop-variable count mismatch");
        for (const auto& sub : n.subgraphs) {
          verify_graph(*sub);
          check_types_match(g, id, param_types(*sub), in, "While operand");
        }
        const auto cond = result_types(*n.subgraphs[0]);
        if (cond.size() != 1 || cond[0].dtype != DType::Bool || cond[0].shape.rank() != 0)
          fail(g, id, "While cond does not return one bool scalar");
        check_types_match(g, id, n.outputs, result_types(*n.subgraphs[1]), "While body result");
        break;
      }
      case OpKind::CustomGradient: {
        const Shape& counts = n.attrs.ints;  // x, y, Variable reads, then one mask bit per x and read
        if (counts.rank() < 3 || n.subgraphs.size() != 1) fail(g, id, "custom_gradient needs its counts and a gradient");
        const size_t nx = static_cast<size_t>(counts[0]), ny = static_cast<size_t>(counts[1]);
        if (nx + ny > in.size() || n.outputs.size() != ny) fail(g, id, "custom_gradient output count mismatch");
        check_types_match(g, id, n.outputs, std::vector<TensorType>(in.begin() + static_cast<std::ptrdiff_t>(nx),
                                                                    in.begin() + static_cast<std::ptrdiff_t>(nx + ny)),
                          "custom_gradient output");
        verify_graph(*n.subgraphs[0]);
        break;
      }
      case OpKind::Print:
      case OpKind::Assert:
        if (!n.outputs.empty()) fail(g, id, fmt::format("{} has outputs", op_name(n.op)));
        if (n.op == OpKind::Assert && (in.empty() || in[0].dtype != DType::Bool || n.attrs.strings.size() != 2))
          fail(g, id, "Assert needs a bool condition and its two strings (message, what)");
        break;
      default: {
        if (n.outputs.size() != 1) fail(g, id, "expected one output");
        TensorType t;
        try {
          t = detail::infer_type(n.op, in, n.attrs, n.loc);
        } catch (const Error& e) {
          fail(g, id, std::string("type rule rejects the node: ") + e.what());
        }
        if (t.dtype != n.outputs[0].dtype || t.rank_unknown != n.outputs[0].rank_unknown ||
            t.shape.rank() != n.outputs[0].shape.rank())
          fail(g, id, fmt::format("type {} differs from the type rule's {}", n.outputs[0].str(), t.str()));
      }
    }
  }
  for (ValueId r : g.results)
    if (r.node >= g.nodes.size() || r.index >= g.nodes[r.node].outputs.size()) fail(g, r.node, "bad result");
}

}  // namespace ag
