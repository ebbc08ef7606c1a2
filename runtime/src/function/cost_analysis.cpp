// ConcreteFunction::cost_analysis() and memory_analysis() (ag/analysis.h): flops and bytes per
// node of the optimized graph, from the op table's kernel families and the static types; the
// compiled code's buffers from its executable.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "ag/detail/ops_internal.h"
#include "concrete.h"

namespace ag::detail {
namespace {

struct Counter {
  CostAnalysis& out;

  double elements(const TensorType& t) {
    if (t.dtype == DType::List || t.has_unknown_rank()) return 0;
    double n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) out.unknown_dims_counted_as_one = true;
      n *= static_cast<double>(std::max<int64_t>(d, 1));
    }
    return n;
  }
  double bytes(const TensorType& t) { return t.dtype == DType::List ? 0 : elements(t) * static_cast<double>(dtype_size(t.dtype)); }

  // The arithmetic of one node: multiply-adds count two; a transcendental counts one of each.
  void arithmetic(const Graph& g, const Node& n, NodeCost& c) {
    const double out = n.outputs.empty() ? 0 : elements(n.outputs[0]);
    const double in = n.inputs.empty() ? 0 : elements(g.type(n.inputs[0]));
    switch (op_class(n.op)) {
      case OpClass::Unary:
      case OpClass::UnaryBool:
      case OpClass::Binary:
      case OpClass::Compare:
      case OpClass::Logical:
      case OpClass::Select:
      case OpClass::Cast:
      case OpClass::Check:
        if (op_info(n.op).cost != OpCost::view) c.flops = out;
        break;
      case OpClass::UnaryFloat:
        c.flops = out;
        if (op_info(n.op).cost == OpCost::costly) c.transcendentals = out;
        break;
      case OpClass::Reduce:
      case OpClass::ArgReduce:
      case OpClass::Scan: c.flops = in; break;
      case OpClass::MatMul: {
        const TensorType& a = g.type(n.inputs[0]);
        const int64_t r = a.shape.rank();
        const int64_t k = r == 0 ? 1 : a.shape[n.attrs.transpose_a() ? r - 2 : r - 1];
        c.flops = 2 * out * static_cast<double>(std::max<int64_t>(k, 1));
        break;
      }
      case OpClass::Window: {
        // A convolution: a multiply-add per output element and filter tap of one input channel
        // (HWIO filters: all but the last dim); pooling: one operation per window element.
        const TensorType& w = g.type(n.inputs.size() > 1 ? n.inputs[1] : n.inputs[0]);
        const double taps = n.inputs.size() > 1 ? elements(w) / std::max(1.0, static_cast<double>(w.shape[w.shape.rank() - 1]))
                                                : static_cast<double>(n.attrs.window().rank() >= 2 ? n.attrs.window()[0] * n.attrs.window()[1] : 1);
        c.flops = (n.inputs.size() > 1 ? 2 : 1) * out * taps;
        break;
      }
      default: break;  // data movement, state, sources, lists: no arithmetic
    }
  }

  void graph(const Graph& g, const std::string& prefix) {
    for (uint32_t id = 0; id < g.nodes.size(); ++id) {
      const Node& n = g.nodes[id];
      if (n.op == OpKind::Placeholder || n.op == OpKind::Const) continue;
      NodeCost c;
      c.op = user_op_name(n.op);
      c.value = fmt::format("{}%{}", prefix, id);
      c.loc = n.loc;
      if (op_class(n.op) != OpClass::Control) {
        arithmetic(g, n, c);
        if (op_info(n.op).cost != OpCost::view) {
          for (ValueId v : n.inputs) c.bytes_read += bytes(g.type(v));
          for (const TensorType& t : n.outputs) c.bytes_written += bytes(t);
        }
      }
      out.flops += c.flops;
      out.transcendentals += c.transcendentals;
      out.bytes_read += c.bytes_read;
      out.bytes_written += c.bytes_written;
      out.nodes.push_back(std::move(c));
      if (n.op == OpKind::While) out.loop_bodies_counted_once = true;
      static const char* const kIf[] = {"then", "else"};
      static const char* const kWhile[] = {"cond", "body"};
      for (size_t s = 0; s < n.subgraphs.size(); ++s)
        graph(*n.subgraphs[s], fmt::format("{}%{}/{}/", prefix, id, n.op == OpKind::While ? kWhile[s % 2] : kIf[s % 2]));
    }
  }
};

std::string quantity(double x, const char* unit) {
  if (x >= 1e9) return fmt::format("{:.2f} G{}", x / 1e9, unit);
  if (x >= 1e6) return fmt::format("{:.2f} M{}", x / 1e6, unit);
  if (x >= 1e3) return fmt::format("{:.2f} K{}", x / 1e3, unit);
  return *unit ? fmt::format("{:.0f} {}", x, unit) : fmt::format("{:.0f}", x);
}

}  // namespace

CostAnalysis concrete_cost_analysis(const ConcreteCore& c) {
  CostAnalysis out;
  Counter{out}.graph(c.graph(), "");
  return out;
}

MemoryAnalysis concrete_memory_analysis(ConcreteCore& c) {
  MemoryAnalysis m;
  const Graph& g = c.graph();
  for (uint32_t p : g.params) m.argument_bytes += std::max<int64_t>(0, g.nodes[p].outputs[0].shape.num_elements()) *
                                                  static_cast<int64_t>(dtype_size(g.nodes[p].outputs[0].dtype));
  for (ValueId r : g.results) {
    const TensorType& t = g.type(r);
    const int64_t n = t.has_unknown_rank() ? -1 : t.shape.num_elements();
    if (n < 0 || m.output_bytes < 0) m.output_bytes = -1;
    else m.output_bytes += n * static_cast<int64_t>(dtype_size(t.dtype));
  }
  auto constants = [&](auto& self, const Graph& graph) -> void {
    for (const Node& n : graph.nodes) {
      if (n.op == OpKind::Const && n.attrs.value.has_value() && n.attrs.value.dtype() != DType::List)
        m.constant_bytes += n.attrs.value.num_elements() * static_cast<int64_t>(dtype_size(n.attrs.value.dtype()));
      for (const auto& sub : n.subgraphs) self(self, *sub);
    }
  };
  constants(constants, g);
  std::tie(m.temp_bytes, m.runtime_sized_temporaries) = c.compiled_executable().temporaries();
  return m;
}

}  // namespace ag::detail

namespace ag {

std::string CostAnalysis::str(size_t top) const {
  std::string s = fmt::format("{} ({} transcendental), {} read, {} written (before fusion){}{}\n",
                              detail::quantity(flops, "flop"), detail::quantity(transcendentals, ""), detail::quantity(bytes_read, "B"), detail::quantity(bytes_written, "B"),
                              loop_bodies_counted_once ? "; loop bodies counted once" : "",
                              unknown_dims_counted_as_one ? "; unknown dims counted as 1" : "");
  std::vector<const NodeCost*> order;
  for (const NodeCost& n : nodes) order.push_back(&n);
  // Costliest first; ties in graph order (the pointers are into one vector).
  std::sort(order.begin(), order.end(),
            [](const NodeCost* a, const NodeCost* b) { return a->flops != b->flops ? a->flops > b->flops : a < b; });
  for (size_t i = 0; i < order.size() && i < top && order[i]->flops > 0; ++i)
    s += fmt::format("  {:>12}  {:<8} {}{}\n", detail::quantity(order[i]->flops, "flop"), order[i]->value, order[i]->op,
                     detail::at(order[i]->loc));
  return s;
}

std::string MemoryAnalysis::str() const {
  return fmt::format("arguments {} B, outputs {}, constants {} B, temporaries {}{}", argument_bytes,
                     output_bytes < 0 ? std::string("sized at run time") : fmt::format("{} B", output_bytes), constant_bytes,
                     temp_bytes < 0 ? std::string("not planned (interpreter)") : fmt::format("{} B", temp_bytes),
                     runtime_sized_temporaries ? fmt::format(" + {} sized at run time", runtime_sized_temporaries) : "");
}

}  // namespace ag
