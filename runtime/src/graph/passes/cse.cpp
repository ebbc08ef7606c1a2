// Common-subexpression elimination: same op, same inputs, same attributes, same types.
#include <cstring>
#include <fmt/format.h>
#include <map>

#include "ag/graph/passes.h"
#include "ag/graph/printer.h"
#include "rebuild.h"

namespace ag {
namespace {

// A key that identifies the node's computation; empty when the node must not be merged.
std::string node_key(const Node& n) {
  if (op_info(n.op).stateful || n.op == OpKind::Placeholder || !n.subgraphs.empty()) return {};
  if (op_class(n.op) == OpClass::List) return {};
  std::string key = fmt::format("{}|", static_cast<int>(n.op));
  for (ValueId v : n.inputs) key += fmt::format("{}:{},", v.node, v.index);
  for (const TensorType& t : n.outputs) key += "|" + t.str();
  const Attrs& a = n.attrs;
  key += fmt::format("|{}|{}|{}|{}|{}|{}|{}", static_cast<int>(a.dtype), a.shape.str(), a.ints.str(), a.axis,
                     a.keepdims, a.scalar, a.scalar2);
  for (const std::string& s : a.strings) key += "|" + std::to_string(s.size()) + ":" + s;  // messages differ
  if (a.callback) key += fmt::format("|callback {}", static_cast<const void*>(a.callback.get()));
  if (n.op == OpKind::Const) {
    const Tensor& t = a.value;
    if (t.dtype() == DType::List || t.num_elements() > 1024) return {};
    key.append(static_cast<const char*>(detail::impl_of(t)->data), static_cast<size_t>(t.num_elements()) * dtype_size(t.dtype()));
  }
  return key;
}

}  // namespace

Graph eliminate_common_subexpressions(const Graph& g) {
  std::map<std::string, std::vector<ValueId>> seen;
  return detail::rebuild(g, [&](detail::GraphRebuilder& rb, uint32_t id) {
    Node n = rb.remapped(id);
    if (!n.subgraphs.empty()) {
      rb.emit(id, detail::with_transformed_subgraphs(std::move(n), &eliminate_common_subexpressions));
      return;
    }
    const std::string key = node_key(n);
    if (!key.empty()) {
      auto it = seen.find(key);
      if (it != seen.end()) {
        rb.alias(id, it->second);
        return;
      }
    }
    rb.emit(id, std::move(n));
    if (!key.empty()) {
      std::vector<ValueId> values;
      for (uint32_t i = 0; i < rb.out().nodes.back().outputs.size(); ++i)
        values.push_back({static_cast<uint32_t>(rb.out().nodes.size() - 1), i});
      seen.emplace(key, std::move(values));
    }
  });
}

}  // namespace ag
