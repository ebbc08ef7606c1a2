// Printing a Program's storage and fused groups through the runtime's graph printers.
#include "plan_dump.h"
#include "segment_pulls.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ag/graph/printer.h"

namespace ag::jit {
namespace {

const char* storage_name(ValueStorage s) {
  switch (s) {
    case ValueStorage::Reg: return "reg";
    case ValueStorage::Fused: return "fused";
    case ValueStorage::Arena: return "arena";
    case ValueStorage::Owned: return "owned";
    case ValueStorage::Dest: return "dest";
    case ValueStorage::Param: return "param";
    case ValueStorage::Const: return "const";
    case ValueStorage::Slot: return "slot";
    case ValueStorage::Borrowed: return "borrowed";
    case ValueStorage::View: return "view";
    case ValueStorage::Box: return "box";
    case ValueStorage::None: return "none";
  }
  return "?";
}

struct PlanNotes {
  std::map<const Graph*, const ScopePlan*> scopes;
  std::set<std::pair<const Graph*, uint32_t>> packed_b;  // products whose B is packed before their loop
  std::set<std::pair<const Graph*, uint32_t>> pulled;    // segment sums pulled by segment (segment_pulls.h)

  const ScopePlan* scope(const Graph& g) const {
    const auto it = scopes.find(&g);
    return it == scopes.end() ? nullptr : it->second;
  }
  std::string text(const Graph& g, uint32_t node) const {
    const ScopePlan* s = scope(g);
    if (!s || node >= s->values.size()) return {};
    std::string note;
    for (const ValuePlan& vp : s->values[node]) {
      note += note.empty() ? "" : ", ";
      note += storage_name(vp.storage);
      if (vp.storage == ValueStorage::Dest) note += fmt::format(" {}", vp.dest);
      if (vp.storage == ValueStorage::View || vp.storage == ValueStorage::Box) note += fmt::format(" of %{}", vp.root.node);
      if (vp.twin_offset >= 0) note += " twin";
    }
    if (packed_b.count({&g, node})) note += ", B packed before the loop";
    if (pulled.count({&g, node})) note += ", pulled by segment (edges ordered before the loop)";
    if (!s->groups[node].empty()) {
      note += ", group=";
      for (size_t k = 0; k < s->groups[node].size(); ++k) note += fmt::format("{}%{}", k ? "," : "", s->groups[node][k]);
    }
    return note;
  }
  std::string cluster(const Graph& g, uint32_t node) const {
    const ScopePlan* s = scope(g);
    if (!s || node >= s->groups.size() || s->groups[node].empty()) return {};
    return fmt::format("fused group %{}", s->groups[node][0]);
  }
};

// Each (sub-)graph's plan. A sub-graph planned more than once (one plan per If/While instance)
// shows its first instance's plan; fusion decides the same way for each.
void index_scopes(const ScopePlan& s, std::map<const Graph*, const ScopePlan*>& out) {
  out.emplace(s.graph, &s);
  for (const auto& per_node : s.children)
    for (const auto& child : per_node) index_scopes(*child, out);
}

PlanNotes notes_of_program(const Program& program) {
  PlanNotes p;
  index_scopes(*program.root, p.scopes);
  if (program.config.pack_loop_weights)
    for_each_packed_operand(*program.root, [&](const Graph& body, uint32_t node) { p.packed_b.insert({&body, node}); });
  if (program.config.pull_segments)
    for_each_segment_pull(*program.root, [&](const Graph& body, uint32_t node) { p.pulled.insert({&body, node}); });
  return p;
}

GraphNotes notes_of(const PlanNotes& p) {
  GraphNotes n;
  n.text = [&p](const Graph& g, uint32_t node) { return p.text(g, node); };
  n.cluster = [&p](const Graph& g, uint32_t node) { return p.cluster(g, node); };
  return n;
}

}  // namespace

namespace {

void name_scope(const ScopePlan& s, const std::string& prefix, std::vector<std::string>& keys) {
  for (uint32_t i = 0; i < s.values.size(); ++i) {
    const size_t id = static_cast<size_t>(s.node_id(i));
    if (id >= keys.size()) keys.resize(id + 1);
    keys[id] = fmt::format("{}n{}", prefix, i);
    for (size_t k = 0; k < s.children[i].size(); ++k)
      name_scope(*s.children[i][k], fmt::format("{}n{}s{}_", prefix, i, k), keys);
  }
}

}  // namespace

std::vector<std::string> plan_node_keys(const Program& program) {
  std::vector<std::string> keys(program.nodes.size());
  name_scope(*program.root, "", keys);
  return keys;
}

std::string plan_graph_text(const Program& program) {
  const PlanNotes p = notes_of_program(program);
  return "// storage of each value and its fused group as planned by the JIT (group=%N: computed in the loop "
         "nest that materializes %N)\n" +
         graph_to_text(*program.graph, notes_of(p));
}

std::string plan_graph_dot(const Program& program) {
  const PlanNotes p = notes_of_program(program);
  return graph_to_dot(*program.graph, notes_of(p));
}

}  // namespace ag::jit
