// See connectivity.h.
#include "connectivity.h"

#include <algorithm>

#include "ag/detail/variable_state.h"

namespace ag::detail {
namespace {

void add(SourceSet& into, const SourceSet& from) {
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i]) into[i] = true;
}

SourceSet only(size_t index, size_t size) {
  SourceSet s(size, false);
  s[index] = true;
  return s;
}

// The outputs' sources of a control node whose inputs have the sources `in` (each of `size`);
// variable v is source `var_base + v`.
std::vector<SourceSet> control_sources(OpKind op, std::span<const std::shared_ptr<const Graph>> subgraphs,
                                       const std::vector<SourceSet>& in, size_t loop_vars,
                                       std::span<const std::shared_ptr<VariableState>> variables, size_t var_base,
                                       size_t size) {
  // The outer sources of sub-graph source p, given the sources of the sub-graph's params.
  auto outer = [&](const std::vector<SourceSet>& params, size_t p) {
    return p < params.size() ? params[p] : only(var_base + (p - params.size()), size);
  };
  if (op == OpKind::If) {
    const std::vector<SourceSet> params(in.begin() + 1, in.end());
    std::vector<SourceSet> out;
    for (const auto& branch : subgraphs) {
      const std::vector<SourceSet> rs = result_sources(*branch, variables);
      out.resize(rs.size(), SourceSet(size, false));
      for (size_t k = 0; k < rs.size(); ++k)
        for (size_t p = 0; p < rs[k].size(); ++p)
          if (rs[k][p]) add(out[k], outer(params, p));
    }
    return out;
  }
  // While: a loop variable depends on what the body makes it from, iterated to a fixed point.
  const std::vector<SourceSet> rs = result_sources(*subgraphs[1], variables);
  std::vector<SourceSet> params = in;  // loop variables (updated below), then invariants
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t j = 0; j < loop_vars && j < rs.size(); ++j) {
      SourceSet next = params[j];
      for (size_t p = 0; p < rs[j].size(); ++p)
        if (rs[j][p]) add(next, outer(params, p));
      if (next != params[j]) {
        params[j] = std::move(next);
        changed = true;
      }
    }
  }
  params.resize(loop_vars);
  return params;
}

}  // namespace

std::vector<SourceSet> result_sources(const Graph& g, std::span<const std::shared_ptr<VariableState>> variables) {
  const size_t size = g.params.size() + variables.size();
  std::vector<std::vector<SourceSet>> values(g.nodes.size());
  for (size_t i = 0; i < g.params.size(); ++i) values[g.params[i]] = {only(i, size)};
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Placeholder) continue;
    std::vector<SourceSet> in;
    for (ValueId v : n.inputs) in.push_back(values[v.node][v.index]);
    std::vector<SourceSet>& out = values[id];
    if (n.op == OpKind::If || n.op == OpKind::While) {
      out = control_sources(n.op, n.subgraphs, in, static_cast<size_t>(n.attrs.loop_vars()), variables,
                            g.params.size(), size);
      continue;
    }
    out.assign(n.outputs.size(), SourceSet(size, false));
    if (n.op == OpKind::ReadVariable) {
      auto it = std::find_if(variables.begin(), variables.end(), [&](const auto& v) { return v.get() == n.attrs.variable.get(); });
      if (it != variables.end()) out[0][g.params.size() + static_cast<size_t>(it - variables.begin())] = true;
      continue;
    }
    if (!op_info(n.op).differentiable) continue;
    for (SourceSet& o : out)
      for (const SourceSet& i : in) add(o, i);
  }
  std::vector<SourceSet> results;
  for (ValueId r : g.results) results.push_back(values[r.node][r.index]);
  return results;
}

std::vector<SourceSet> control_output_sources(OpKind op, std::span<const std::shared_ptr<const Graph>> subgraphs,
                                              size_t num_inputs, size_t loop_vars,
                                              std::span<const std::shared_ptr<VariableState>> variables) {
  const size_t size = num_inputs + variables.size();
  std::vector<SourceSet> in;
  for (size_t i = 0; i < num_inputs; ++i) in.push_back(only(i, size));
  return control_sources(op, subgraphs, in, loop_vars, variables, num_inputs, size);
}

SourceSet reached_sources(const std::vector<SourceSet>& sets, const std::vector<bool>& reached, size_t num_sources) {
  SourceSet out(num_sources, false);
  for (size_t k = 0; k < sets.size() && k < reached.size(); ++k)
    if (reached[k]) add(out, sets[k]);
  return out;
}

}  // namespace ag::detail
