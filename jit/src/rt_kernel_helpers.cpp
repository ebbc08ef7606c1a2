// The runtime helpers behind the Window and Index families (lower/lower_runtime_kernel.cpp):
// compiled code calls the eager kernels' code on its own buffers, so float32 convolutions run
// on oneDNN there too, and a shape known only at run time is checked by the type rule, whose
// messages are the eager ones.
#include <algorithm>
#include <vector>

#include "ag/detail/ops_internal.h"
#include "ag/error.h"
#include "ag/detail/runtime_kernels.h"
#include "call_state.h"

using ag::jit::CallState;
using ag::jit::JitArg;
using ag::jit::JitCallCtx;

namespace {

std::vector<ag::Tensor> input_views(CallState& st, int32_t node, const JitArg* ins) {
  const ag::jit::NodeInfo& info = st.program->nodes[static_cast<size_t>(node)];
  std::vector<ag::Tensor> views;
  views.reserve(info.input_types.size());
  for (size_t k = 0; k < info.input_types.size(); ++k) views.push_back(ag::jit::view_of(ins[k], info.input_types[k]));
  return views;
}

}  // namespace

int32_t agc_rt_kernel_dims(JitCallCtx* ctx, int32_t node, const JitArg* ins, int64_t* dims) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::Node& n = *st.program->nodes[static_cast<size_t>(node)].node;
    std::vector<ag::TensorType> types;
    for (const ag::Tensor& v : input_views(st, node, ins)) types.push_back(ag::detail::type_of(v));
    try {
      const ag::Shape s = ag::detail::infer_type(n.op, types, n.attrs, n.loc).shape;
      std::copy(s.begin(), s.end(), dims);
    } catch (const ag::ValueError& e) {
      // Shapes that disagree at run time are a bad argument (TensorFlow's InvalidArgumentError),
      // as a matmul's inner dims are.
      throw ag::InvalidArgumentError(e.what());
    }
  });
}

int32_t agc_rt_kernel(JitCallCtx* ctx, int32_t node, const JitArg* ins, void* out) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::Node& n = *st.program->nodes[static_cast<size_t>(node)].node;
    ag::detail::compute_into(n.op, input_views(st, node, ins), n.attrs, out, n.loc);
  });
}
