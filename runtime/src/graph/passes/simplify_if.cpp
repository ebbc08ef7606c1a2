// Simplification of the If chains that lowered early returns leave behind. `if (x > 0) return x;
// return 0;` traces into two Ifs: the first sets a do_return flag (Const true in one branch, Const
// false in the other), the second is predicated on LogicalNot(flag). Rewrites, to a fixed point:
//   1. an If output that is Const true in `then` and Const false in `else` is the predicate (the
//      reverse: its negation);
//   2. an If on LogicalNot(p) is an If on p with its branches swapped;
//   3. two Ifs on the same predicate, the second reading only the first's outputs and values
//      defined before the first, with no side effect between them, are one If whose branches run
//      the first's branch and then the second's;
//   4. the same when the second If's predicate is a bool output of the first that is a constant
//      in at least one of its branches (an early return's flag, from a nested If): that branch
//      runs the second's branch the constant selects, the other nests the second If;
//   5. If outputs nobody reads are dropped (at least one output stays).
// Every rewrite keeps side effects and their order: the merged branches run them in sequence.
#include <map>

#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "rebuild.h"

namespace ag {
namespace {

using detail::GraphRebuilder;
using detail::inline_graph_into;

// The bool value of a scalar Const bool result of `g`, or -1.
int const_flag(const Graph& g, ValueId v) {
  if (!detail::is_const(g, v)) return -1;
  const Tensor& t = detail::const_value(g, v);
  if (t.dtype() != DType::Bool || t.rank() != 0) return -1;
  return *t.data<bool>() ? 1 : 0;
}

// Constant operands up to this many elements are copied into If branches.
constexpr int64_t kCopiedConstLimit = 64;

bool is_scalar_bool(const TensorType& t) { return t.dtype == DType::Bool && t.shape.rank() == 0; }

// `sub` with parameter `p` replaced by a Const `value` (the parameter stays, unread).
std::shared_ptr<const Graph> with_param_known(const Graph& sub, size_t p, const Tensor& value, SourceLoc loc) {
  auto out = std::make_shared<Graph>();
  out->name = sub.name;
  std::vector<ValueId> args;
  for (uint32_t q : sub.params) args.push_back(out->add_param(sub.nodes[q].outputs[0], sub.nodes[q].loc));
  Node c;
  c.op = OpKind::Const;
  c.attrs.value = value;
  c.outputs = {detail::type_of(value)};
  c.loc = loc;
  args[p] = out->add(std::move(c));
  out->results = inline_graph_into(*out, sub, args);
  return out;
}

// Rewrites 1 and 2, after simplifying the sub-graphs (a level without merges is visited once
// per enclosing round, so nesting does not multiply the work unless Ifs merge).
Graph fold_flags(const Graph& g) {
  return detail::rebuild(g, [](GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (n.op == OpKind::If) {
      const Node& pred_producer = rb.out().producer(n.inputs[0]);
      if (pred_producer.op == OpKind::LogicalNot) {
        n.inputs[0] = pred_producer.inputs[0];
        std::swap(n.subgraphs[0], n.subgraphs[1]);
      }
      // Inside a branch its predicate is known: true in `then`, false in `else` (a flag passed
      // in by a merge, or a nested early return's guard).
      // Small constant operands are copied in, so flags set before a nested If fold inside it.
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        const ValueId v = n.inputs[k];
        if (v == n.inputs[0]) {
          n.subgraphs[0] = with_param_known(*n.subgraphs[0], k - 1, Tensor(true), n.loc);
          n.subgraphs[1] = with_param_known(*n.subgraphs[1], k - 1, Tensor(false), n.loc);
        } else if (detail::is_const(rb.out(), v) && detail::const_value(rb.out(), v).dtype() != DType::List &&
                   detail::const_value(rb.out(), v).num_elements() <= kCopiedConstLimit) {
          const Tensor value = detail::const_value(rb.out(), v);
          for (auto& sub : n.subgraphs) sub = with_param_known(*sub, k - 1, value, n.loc);
        }
      }
    }
    if (!n.subgraphs.empty()) n = detail::with_transformed_subgraphs(std::move(n), &simplify_conditionals);
    if (n.op != OpKind::If || n.outputs.empty()) {
      rb.emit(id, std::move(n));
      return;
    }
    const ValueId pred = n.inputs[0];
    const Graph& then_g = *n.subgraphs[0];
    const Graph& else_g = *n.subgraphs[1];
    const uint32_t count = static_cast<uint32_t>(n.outputs.size());
    const SourceLoc loc = n.loc;
    std::vector<int> flags(count, -1);  // 1: the predicate, 0: its negation
    for (uint32_t k = 0; k < count; ++k) {
      const int t = const_flag(then_g, then_g.results[k]), e = const_flag(else_g, else_g.results[k]);
      if (t >= 0 && e >= 0 && t != e && is_scalar_bool(n.outputs[k])) flags[k] = t;
    }
    rb.emit(id, std::move(n));
    const ValueId node{static_cast<uint32_t>(rb.out().nodes.size() - 1), 0};
    std::vector<ValueId> values;
    ValueId negated{};
    bool have_negated = false;
    for (uint32_t k = 0; k < count; ++k) {
      if (flags[k] == 1) {
        values.push_back(pred);
      } else if (flags[k] == 0) {
        if (!have_negated) {
          Node not_node;
          not_node.op = OpKind::LogicalNot;
          not_node.inputs = {pred};
          not_node.outputs = {{DType::Bool, Shape{}}};
          not_node.loc = loc;
          negated = rb.out().add(std::move(not_node));
          have_negated = true;
        }
        values.push_back(negated);
      } else {
        values.push_back({node.node, k});
      }
    }
    rb.alias(id, std::move(values));
  });
}

// The value the predicate of If `second` has in branch `b` of If `first`, its partner: 1 or 0
// when known (the same predicate, or a constant flag output of `first`), -1 when not.
int known_predicate(const Node& first, const Node& second, uint32_t first_id, size_t b) {
  if (second.inputs[0] == first.inputs[0]) return b == 0 ? 1 : 0;
  if (second.inputs[0].node != first_id) return -1;
  const Graph& branch = *first.subgraphs[b];
  return const_flag(branch, branch.results[second.inputs[0].index]);
}

// Rewrites 3 and 4: merge partners, first If id -> second If id.
std::map<uint32_t, uint32_t> merge_partners(const Graph& g) {
  std::map<uint32_t, uint32_t> partners;
  std::vector<bool> taken(g.nodes.size(), false);
  for (uint32_t j = 0; j < g.nodes.size(); ++j) {
    if (g.nodes[j].op != OpKind::If) continue;
    const Node& second = g.nodes[j];
    // The nearest earlier If on the same predicate, or the If computing the predicate, with
    // nothing effectful in between.
    for (uint32_t i = j; i-- > 0;) {
      const Node& n = g.nodes[i];
      if (n.op == OpKind::If && (n.inputs[0] == second.inputs[0] || second.inputs[0].node == i)) {
        bool ok = !taken[i] && (known_predicate(n, second, i, 0) >= 0 || known_predicate(n, second, i, 1) >= 0);
        for (size_t k = 1; ok && k < second.inputs.size(); ++k)
          ok = second.inputs[k].node == i || second.inputs[k].node < i;
        if (ok) {
          partners[i] = j;
          taken[i] = taken[j] = true;
        }
        break;
      }
      if (has_side_effects(n)) break;
    }
  }
  return partners;
}

Graph merge_ifs(const Graph& g) {
  const std::map<uint32_t, uint32_t> partners = merge_partners(g);
  if (partners.empty()) return g;
  std::map<uint32_t, std::vector<ValueId>> second_values;  // second If -> its merged outputs
  return detail::rebuild(g, [&](GraphRebuilder& rb, uint32_t id) {
    if (auto done = second_values.find(id); done != second_values.end()) {
      rb.alias(id, done->second);
      return;
    }
    auto partner = partners.find(id);
    if (partner == partners.end()) {
      rb.emit(id, rb.remapped(id));
      return;
    }
    const Node& first = g.nodes[id];
    const Node& second = g.nodes[partner->second];
    // Operands: the first's, then the second's that are not the first's outputs (deduplicated).
    Node merged;
    merged.op = OpKind::If;
    merged.loc = first.loc;
    merged.inputs = {rb.map(first.inputs[0])};
    // Per merged operand: where its branch parameter type comes from (each branch's own
    // parameter types, which the operands fit).
    std::vector<std::pair<const Node*, size_t>> param_source;
    for (size_t k = 1; k < first.inputs.size(); ++k) {
      merged.inputs.push_back(rb.map(first.inputs[k]));
      param_source.push_back({&first, k - 1});
    }
    std::vector<int> extra_index(second.inputs.size(), -1);  // second's operand k -> merged param
    for (size_t k = 1; k < second.inputs.size(); ++k) {
      if (second.inputs[k].node == id) continue;
      const ValueId mapped = rb.map(second.inputs[k]);
      for (size_t m = 1; m < merged.inputs.size() && extra_index[k] < 0; ++m)
        if (merged.inputs[m] == mapped) extra_index[k] = static_cast<int>(m - 1);
      if (extra_index[k] < 0) {
        merged.inputs.push_back(mapped);
        param_source.push_back({&second, k - 1});
        extra_index[k] = static_cast<int>(merged.inputs.size() - 2);
      }
    }
    for (size_t b = 0; b < 2; ++b) {
      auto branch = std::make_shared<Graph>();
      branch->name = first.subgraphs[b]->name;
      std::vector<ValueId> params;
      for (const auto& [node, p] : param_source) {
        const Graph& sub = *node->subgraphs[b];
        params.push_back(branch->add_param(sub.type(sub.param(p)), first.loc));
      }
      const std::vector<ValueId> first_args(params.begin(), params.begin() + static_cast<long>(first.inputs.size() - 1));
      std::vector<ValueId> results = inline_graph_into(*branch, *first.subgraphs[b], first_args);
      std::vector<ValueId> second_args;
      for (size_t k = 1; k < second.inputs.size(); ++k)
        second_args.push_back(second.inputs[k].node == id ? results[second.inputs[k].index]
                                                          : params[static_cast<size_t>(extra_index[k])]);
      const int known = known_predicate(first, second, id, b);
      if (known >= 0) {
        for (ValueId r : inline_graph_into(*branch, *second.subgraphs[known ? 0 : 1], second_args)) results.push_back(r);
      } else {  // rewrite 4's other branch: the second If, on the flag this branch computed
        Node nested = second;
        nested.inputs = {results[second.inputs[0].index]};
        nested.inputs.insert(nested.inputs.end(), second_args.begin(), second_args.end());
        const ValueId v = branch->add(std::move(nested));
        for (uint32_t k = 0; k < second.outputs.size(); ++k) results.push_back({v.node, k});
      }
      branch->results = std::move(results);
      merged.subgraphs.push_back(std::move(branch));
    }
    merged.outputs = first.outputs;
    merged.outputs.insert(merged.outputs.end(), second.outputs.begin(), second.outputs.end());
    const uint32_t n1 = static_cast<uint32_t>(first.outputs.size());
    const uint32_t n2 = static_cast<uint32_t>(second.outputs.size());
    rb.emit(id, std::move(merged));
    const uint32_t node = static_cast<uint32_t>(rb.out().nodes.size() - 1);
    std::vector<ValueId> seconds;
    for (uint32_t k = 0; k < n2; ++k) seconds.push_back({node, n1 + k});
    second_values[partner->second] = std::move(seconds);
    std::vector<ValueId> firsts;
    for (uint32_t k = 0; k < n1; ++k) firsts.push_back({node, k});
    rb.alias(id, std::move(firsts));
  });
}

// True when parameter `p` of `g` is read by a node or returned.
bool reads_param(const Graph& g, size_t p) {
  const uint32_t node = g.params[p];
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v.node == node) return true;
  for (ValueId r : g.results)
    if (r.node == node) return true;
  return false;
}

// `sub` without the parameters that `keep` marks false (no node reads them).
std::shared_ptr<const Graph> without_params(const Graph& sub, const std::vector<bool>& keep) {
  auto out = std::make_shared<Graph>();
  out->name = sub.name;
  std::vector<ValueId> args;
  for (size_t p = 0; p < sub.params.size(); ++p)
    args.push_back(keep[p] ? out->add_param(sub.nodes[sub.params[p]].outputs[0], sub.nodes[sub.params[p]].loc)
                           : ValueId{});  // never read
  out->results = inline_graph_into(*out, sub, args);
  return out;
}

// If operands neither branch reads (a predicate passed along by a merge, say) are dropped.
Node without_unread_operands(Node n) {
  const size_t count = n.inputs.size() - 1;
  std::vector<bool> keep(count, false);
  bool any_dropped = false;
  for (size_t k = 0; k < count; ++k) {
    keep[k] = reads_param(*n.subgraphs[0], k) || reads_param(*n.subgraphs[1], k);
    any_dropped |= !keep[k];
  }
  if (!any_dropped) return n;
  std::vector<ValueId> inputs = {n.inputs[0]};
  for (size_t k = 0; k < count; ++k)
    if (keep[k]) inputs.push_back(n.inputs[k + 1]);
  n.inputs = std::move(inputs);
  for (auto& sub : n.subgraphs) sub = without_params(*sub, keep);
  return n;
}

// Rewrite 5, and unread operands.
Graph drop_unused_outputs(const Graph& g) {
  std::vector<std::vector<bool>> used(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i) used[i].assign(g.nodes[i].outputs.size(), false);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs) used[v.node][v.index] = true;
  for (ValueId r : g.results) used[r.node][r.index] = true;
  return detail::rebuild(g, [&](GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (n.op == OpKind::If) n = without_unread_operands(std::move(n));
    size_t kept = 0;
    for (bool u : used[id]) kept += u;
    if (n.op != OpKind::If || kept == 0 || kept == n.outputs.size()) {
      rb.emit(id, std::move(n));
      return;
    }
    std::vector<uint32_t> new_index(n.outputs.size(), 0);
    std::vector<TensorType> outputs;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (used[id][k]) {
        new_index[k] = static_cast<uint32_t>(outputs.size());
        outputs.push_back(n.outputs[k]);
      }
    for (auto& sub : n.subgraphs) {
      auto copy = std::make_shared<Graph>(*sub);
      copy->results.clear();
      for (size_t k = 0; k < sub->results.size(); ++k)
        if (used[id][k]) copy->results.push_back(sub->results[k]);
      sub = std::move(copy);
    }
    n.outputs = std::move(outputs);
    const size_t count = used[id].size();
    rb.emit(id, std::move(n));
    const uint32_t node = static_cast<uint32_t>(rb.out().nodes.size() - 1);
    std::vector<ValueId> values;
    for (size_t k = 0; k < count; ++k) values.push_back({node, new_index[k]});  // unused ones are never read
    rb.alias(id, std::move(values));
  });
}

size_t count_ifs(const Graph& g) {
  size_t n = 0;
  for (const Node& node : g.nodes) n += node.op == OpKind::If;
  return n;
}

}  // namespace

Graph simplify_conditionals(const Graph& input) {
  Graph g = fold_flags(input);
  for (int round = 0; round < 8; ++round) {
    const size_t before = count_ifs(g);
    g = drop_unused_outputs(prune(merge_ifs(g)));
    if (count_ifs(g) == before) break;
    g = fold_flags(g);
  }
  return g;
}

}  // namespace ag
