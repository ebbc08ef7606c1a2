#include "matmul_forms.h"

#include "plan.h"

#include <algorithm>

namespace ag::jit {

std::vector<LoopInvariantOperand> loop_invariant_gemm_operands(const Graph& body, int64_t loop_vars) {
  std::vector<LoopInvariantOperand> nodes;
  for (uint32_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    if (n.op != OpKind::MatMul) continue;
    const DType d = n.outputs[0].dtype;
    const TensorType &a = body.type(n.inputs[0]), &b = body.type(n.inputs[1]);
    if ((d != DType::Float32 && d != DType::Float64) || a.shape.rank() != 2 || b.shape.rank() != 2 ||
        !a.shape.is_fully_defined() || !b.shape.is_fully_defined())
      continue;
    const int64_t param = loop_capture(body, n.inputs[1], loop_vars);
    if (param < 0) continue;
    const bool ta = n.attrs.transpose_a(), tb = n.attrs.transpose_b();
    const int64_t m = a.shape[ta ? 1 : 0], k = a.shape[ta ? 0 : 1], cols = b.shape[tb ? 0 : 1];
    if (m < 2 || cols < 2 || k < 1 || matmul_inline(m, k, cols)) continue;
    nodes.push_back({i, static_cast<size_t>(param)});
  }
  return nodes;
}

}  // namespace ag::jit
