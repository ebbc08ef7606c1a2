// Graph construction.
#include "ag/graph/graph.h"

namespace ag {

ValueId Graph::add(Node n) {
  nodes.push_back(std::move(n));
  return {static_cast<uint32_t>(nodes.size() - 1), 0};
}

ValueId Graph::add_param(TensorType type, SourceLoc loc) {
  Node n;
  n.op = OpKind::Placeholder;
  n.attrs.param_index() = static_cast<int64_t>(params.size());
  n.outputs = {std::move(type)};
  n.loc = loc;
  ValueId v = add(std::move(n));
  params.push_back(v.node);
  return v;
}

}  // namespace ag
