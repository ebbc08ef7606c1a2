// The typed helpers behind the native lowering of the TensorArray ops (lower/lower_state.cpp).
// A TensorArray's handle lives in a runtime slot; its elements are one contiguous buffer
// (ag/detail/tensor_list.h). A write copies the value into that buffer in place when the code
// holds the only reference; a read or a stack hands the JIT code a pointer to the data, which the
// code copies into its own buffer at once. No tensor is made, no type inferred: the node's type
// was checked when the graph was built. The operations and their messages are the eager ones.
// No exception escapes into JIT code.
#include <algorithm>
#include <cstring>
#include <exception>

#include "ag/detail/ops_internal.h"
#include "ag/detail/tensor_list.h"
#include "call_state.h"

namespace ag::jit {
namespace {

const NodeInfo& info_of(CallState& st, int32_t node) { return st.program->nodes[static_cast<size_t>(node)]; }

const detail::TensorList& input_list(CallState& st, const NodeInfo& info) {
  return detail::list_of(st.slots()[static_cast<size_t>(info.in_slots[0])]);
}

// Copies run-time dims to the code's array after checking them against the static type the
// code was compiled for (known dims must agree).
void deliver_dims(const NodeInfo& info, const Shape& shape, int64_t* dims) {
  const Shape& want = info.node->outputs[0].shape;
  bool ok = shape.rank() == want.rank();
  for (int64_t d = 0; ok && d < want.rank(); ++d) ok = want[d] < 0 || want[d] == shape[d];
  if (!ok) throw_failure(info, FailKind::RuntimeType, shape.rank(), want.rank());
  std::copy(shape.begin(), shape.end(), dims);
}

}  // namespace
}  // namespace ag::jit

using ag::jit::CallState;
using ag::jit::JitArg;
using ag::jit::JitCallCtx;

extern "C" {

int32_t agc_rt_list_const(JitCallCtx* ctx, int32_t node) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = ag::jit::info_of(st, node);
    st.slots()[static_cast<size_t>(info.out_slot)] = info.node->attrs.value;  // shared: a write copies it
  });
}

int32_t agc_rt_list_write(JitCallCtx* ctx, int32_t node, int64_t index, const JitArg* value) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = ag::jit::info_of(st, node);
    ag::Tensor& in = st.slots()[static_cast<size_t>(info.in_slots[0])];
    const ag::Tensor handle = (info.consume & 1) ? std::move(in) : in;
    ag::Tensor out = ag::detail::unshared_list(handle);
    ag::detail::TensorList& l = ag::detail::list_of(out);
    const ag::TensorType& vt = info.input_types[2];
    if (vt.dtype != l.elem_dtype)  // the graph's type rule checked it; a captured list is checked here
      throw ag::TypeError("TensorArray::write: the TensorArray holds " + std::string(ag::dtype_name(l.elem_dtype)) +
                          " but the value is " + std::string(ag::dtype_name(vt.dtype)) + ag::detail::at(info.node->loc));
    const ag::Shape shape(std::span<const int64_t>(value->dims, static_cast<size_t>(vt.shape.rank())));
    ag::detail::list_write(l, index, value->data, shape, info.node->loc);
    st.slots()[static_cast<size_t>(info.out_slot)] = std::move(out);
  });
}

int32_t agc_rt_list_read(JitCallCtx* ctx, int32_t node, int64_t index, int64_t* dims, const void** data) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = ag::jit::info_of(st, node);
    const ag::detail::TensorList& l = ag::jit::input_list(st, info);
    *data = ag::detail::list_element(l, index, info.node->loc);
    ag::jit::deliver_dims(info, ag::detail::list_element_shape(l, index), dims);
  });
}

int32_t agc_rt_list_stack(JitCallCtx* ctx, int32_t node, int64_t* dims, const void** data) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = ag::jit::info_of(st, node);
    const ag::detail::TensorList& l = ag::jit::input_list(st, info);
    const ag::Shape& type = info.node->outputs[0].shape;
    const ag::Shape stacked = ag::detail::list_stacked_shape(l, ag::Shape(type.begin() + 1, type.end()));
    ag::jit::deliver_dims(info, stacked, dims);
    *data = ag::detail::list_stacked_data(l);  // null: zeros
  });
}

int64_t agc_rt_list_size(JitCallCtx* ctx, int32_t node) {
  CallState& st = *ctx->state;
  return ag::jit::input_list(st, ag::jit::info_of(st, node)).size;
}

}  // extern "C"
