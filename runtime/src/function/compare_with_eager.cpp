// ag::debugging::compare_with_eager and AG_CHECK=eager: a call run by the compiled code and by the
// eager kernels node by node (the graph interpreter), on a copy of the graph whose every value is
// a result, so that the first value that differs is found, not only a wrong result.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ag/detail/fork_safety.h"
#include "ag/detail/log.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/variable_state.h"
#include "ag/print.h"
#include "concrete.h"

namespace ag::detail {

// The probe: the graph with every value a result (after the graph's own results), what each
// extra result is, the Variables the graph reads or writes, and both ways to run it.
struct ConcreteCore::Probe {
  std::shared_ptr<const Graph> graph;
  std::vector<ValueId> values;  // per extra result
  std::vector<std::shared_ptr<VariableState>> variables;
  std::unique_ptr<Executable> compiled, eager;
};

namespace {

void collect_variables(const Graph& g, std::vector<std::shared_ptr<VariableState>>& out) {
  for (const Node& n : g.nodes) {
    if (n.attrs.variable && std::find(out.begin(), out.end(), n.attrs.variable) == out.end()) out.push_back(n.attrs.variable);
    for (const auto& sub : n.subgraphs) collect_variables(*sub, out);
  }
}

// A copy in a buffer of its own: compiled code may update a Variable's buffer in place.
Tensor copy_of(const Tensor& t) { return eval_op(OpKind::Identity, std::span<const Tensor>(&t, 1), Attrs::none(), {}); }

std::vector<Tensor> snapshot(const std::vector<std::shared_ptr<VariableState>>& vars) {
  std::vector<Tensor> out;
  for (const auto& v : vars) out.push_back(copy_of(v->read()));
  return out;
}

void restore(const std::vector<std::shared_ptr<VariableState>>& vars, const std::vector<Tensor>& values) {
  for (size_t i = 0; i < vars.size(); ++i) vars[i]->write(copy_of(values[i]));
}

// -1: the values agree; -2: dtype or shape differ; else the first element that differs.
int64_t first_difference(const Tensor& eager, const Tensor& compiled, const debugging::Tolerance& tol) {
  if (eager.dtype() != compiled.dtype() || !(eager.shape() == compiled.shape())) return -2;
  const int64_t n = eager.num_elements();
  if (is_floating(eager.dtype())) {
    const std::vector<double> e = eager.to_vector<double>(), c = compiled.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const double x = e[static_cast<size_t>(i)], y = c[static_cast<size_t>(i)];
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y) || std::abs(x - y) > tol.atol + tol.rtol * std::abs(x))
        return i;
    }
    return -1;
  }
  const std::vector<int64_t> e = eager.to_vector<int64_t>(), c = compiled.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    if (e[static_cast<size_t>(i)] != c[static_cast<size_t>(i)]) return i;
  return -1;
}

// A value for the report: whole when small, else the differing element.
std::string shown(const Tensor& t, int64_t element) {
  if (t.num_elements() <= 24 || element < 0) {
    std::string text = format_values(t);  // on one line: "[[0 0] [0 0]]"
    std::erase(text, '\n');
    return text;
  }
  const std::string at = element_index_str(t.shape(), element);
  return is_floating(t.dtype()) ? fmt::format("{} at {}", t.to_vector<double>()[static_cast<size_t>(element)], at)
                                : fmt::format("{} at {}", t.to_vector<int64_t>()[static_cast<size_t>(element)], at);
}

bool probed(const Node& n, const TensorType& t) {
  return n.op != OpKind::Placeholder && n.op != OpKind::Const && t.dtype != DType::List && !t.has_unknown_rank();
}

}  // namespace

const ConcreteCore::Probe& ConcreteCore::probe() {
  const ForkGatePass pass;
  std::lock_guard lock(compile_mu_);
  if (probe_) return *probe_;
  CompilerBackend* backend = compiler_backend();
  if (!backend)
    throw ValueError(fmt::format("compare_with_eager({}): no JIT backend is linked into this program, so there is no "
                                 "compiled code to compare; link agc::agc", signature_str()));
  auto p = std::make_shared<Probe>();
  Graph g = *graph_;
  for (uint32_t id = 0; id < g.nodes.size(); ++id)
    for (uint32_t k = 0; k < g.nodes[id].outputs.size(); ++k)
      if (probed(g.nodes[id], g.nodes[id].outputs[k])) {
        g.results.push_back({id, k});
        p->values.push_back({id, k});
      }
  p->graph = std::make_shared<const Graph>(std::move(g));
  collect_variables(*p->graph, p->variables);
  CompileOptions opts;
  opts.name = name_ + ".compare";
  p->compiled = backend->compile(p->graph, opts);
  p->eager = make_interpreter(p->graph);
  probe_ = std::move(p);
  return *probe_;
}

debugging::EagerComparison ConcreteCore::compare_with_eager(std::span<const ArgView> args, const debugging::Tolerance& tol,
                                                            std::span<Tensor> outputs) {
  std::shared_ptr<ConcreteCore> hold;
  if (ConcreteCore& bound = bound_to(args, hold); &bound != this) return bound.compare_with_eager(args, tol, outputs);
  check_call(args);
  const Probe& p = probe();
  std::vector<Tensor> in;
  for_each_tensor(args, [&](const Tensor& t) { in.push_back(t); });
  const std::vector<Tensor> before = snapshot(p.variables);
  std::vector<Tensor> eager(p.graph->results.size()), compiled(p.graph->results.size());
  p.eager->run(in, eager);
  const std::vector<Tensor> eager_after = snapshot(p.variables);
  restore(p.variables, before);
  p.compiled->run(in, compiled);  // its side effects are the ones kept

  debugging::EagerComparison r;
  const size_t n_results = graph_->results.size();
  auto differs = [&](const Tensor& e, const Tensor& c, std::string op, std::string value, SourceLoc loc) {
    ++r.values_compared;
    const int64_t at = first_difference(e, c, tol);
    if (at == -1 || r.first_difference) return;
    r.first_difference = debugging::NodeDifference{std::move(op), std::move(value), loc, at < 0 ? -1 : at,
                                                   shown(e, at) + (at == -2 ? " " + type_of(e).str() : ""),
                                                   shown(c, at) + (at == -2 ? " " + type_of(c).str() : "")};
  };
  for (size_t k = 0; k < p.values.size(); ++k) {
    const ValueId v = p.values[k];
    const Node& node = p.graph->nodes[v.node];
    const std::string name = node.outputs.size() > 1 ? fmt::format("%{}#{}", v.node, v.index) : fmt::format("%{}", v.node);
    differs(eager[n_results + k], compiled[n_results + k], user_op_name(node.op),
            fmt::format("{} : {}", name, node.outputs[v.index].str()), node.loc);
  }
  // Results that are arguments or constants, and the Variables after the call.
  for (size_t k = 0; k < n_results; ++k)
    differs(eager[k], compiled[k], "result", fmt::format("result {}", k), {});
  for (size_t i = 0; i < p.variables.size(); ++i)
    differs(eager_after[i], p.variables[i]->read(), "Variable " + p.variables[i]->describe(), "its value after the call", {});
  for (size_t k = 0; k < outputs.size() && k < n_results; ++k) outputs[k] = std::move(compiled[k]);
  return r;
}

debugging::EagerComparison compare_concrete_with_eager(ConcreteCore& c, std::span<const ArgView> args,
                                                       const debugging::Tolerance& tol) {
  return c.compare_with_eager(args, tol, {});
}

void check_eager_env_start() {
  static const bool on = [] {
    const char* e = std::getenv("AG_CHECK");
    if (!e || !*e) return false;
    if (std::strcmp(e, "eager") != 0) {
      log_line(fmt::format("agc: warning: AG_CHECK={} is not a check agc knows (ignored); the check is AG_CHECK=eager", e));
      return false;
    }
    set_call_hook(CallHook::CheckEager, true);
    return true;
  }();
  (void)on;
}

}  // namespace ag::detail

namespace ag::debugging {

std::string EagerComparison::str() const {
  if (!first_difference)
    return fmt::format("compare_with_eager: compiled code agrees with the eager kernels on {} values", values_compared);
  const NodeDifference& d = *first_difference;
  return fmt::format("compare_with_eager: {} ({}){} differs: eager {}, compiled {}{}", d.op, d.value,
                     d.element >= 0 ? fmt::format(" at element {}", d.element) : std::string(), d.eager, d.compiled,
                     detail::at(d.loc));
}

}  // namespace ag::debugging
