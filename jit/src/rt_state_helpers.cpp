// The typed helpers behind the native lowering of Variable reads/assignments, random draws, print and assert
// (lower/lower_state.cpp). Unlike agc_rt_eval they copy no inputs, allocate nothing on the
// common path and infer no types: the node's type was checked when the graph was built. The
// rare paths (a shape that does not fit, an assertion that fails) defer to the eager code so
// that messages are the eager ones. No exception escapes into JIT code.
#include <cstring>
#include <exception>
#include <mutex>
#include <type_traits>

#include "ag/detail/communicator.h"
#include "ag/detail/kernel_set.h"
#include "ag/detail/log.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/out_of_memory.h"
#include "ag/detail/profiler.h"
#include "ag/detail/variable_state.h"
#include "call_state.h"

namespace ag::detail {
// The eager kernels' pieces these helpers share (runtime/src/ops/stateful.cpp, assert.cpp).
Tensor assigned_value(OpKind op, const VariableState& v, const Tensor& current, const Tensor& operand, SourceLoc loc);
std::string format_print(const Attrs& attrs, std::span<const Tensor> tensors);
std::pair<uint64_t, uint64_t> take_random_words(VariableState& state, OpKind op, const Shape& shape);
void check_assertion(std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc);
}  // namespace ag::detail

namespace ag::jit {

Tensor view_of(const JitArg& a, const TensorType& t) {
  auto* impl = new detail::TensorImpl;
  impl->dtype = t.dtype;
  impl->shape = Shape(std::span<const int64_t>(a.dims, static_cast<size_t>(t.shape.rank())));
  impl->data = a.data;
  return ag::detail::adopt(impl);
}

namespace {

using detail::VariableState;

size_t value_bytes(const VariableState& v) {
  return static_cast<size_t>(v.shape.num_elements()) * dtype_size(v.dtype);
}

// Whether the value's buffer may be written in place: the variable holds the only reference
// to its tensor and storage, and the storage is not external memory.
bool writable_in_place(const detail::TensorImpl* impl) {
  const detail::Storage* s = impl->storage;
  return detail::sole_owner(impl->refs) && s && detail::sole_owner(s->refs) && !(s->flags & detail::Storage::kExternal);
}

// The buffer of the variable's value, safe to write in place (the caller holds v.mu). A tensor
// an eager reader got from Variable::value() (or the initial value) shares it: then the value is
// replaced by a copy first, as an eager assignment replaces it, so that reader never sees a
// change. In a loop of assignments only the first copies.
void* writable_value(VariableState& v, bool keep_contents) {
  const detail::TensorImpl* impl = ag::detail::impl_of(v.value);
  if (writable_in_place(impl)) return impl->data;
  Tensor fresh = detail::make_tensor(v.dtype, v.shape);
  if (keep_contents && value_bytes(v)) std::memcpy(ag::detail::impl_of(fresh)->data, impl->data, value_bytes(v));
  v.value = std::move(fresh);
  return ag::detail::impl_of(v.value)->data;
}

// Whether operand dims fit the variable's shape without the eager kernel: assign takes a scalar
// (filled) or the exact shape; assign_add/sub any shape that broadcasts to the variable's.
bool operand_fits(OpKind op, const Shape& var, const int64_t* dims, int64_t rank) {
  if (rank == 0) return true;
  if (rank > var.rank() || (op == OpKind::AssignVariable && rank != var.rank())) return false;
  const int64_t lead = var.rank() - rank;
  for (int64_t j = 0; j < rank; ++j)
    if (dims[j] != var[lead + j] && (op == OpKind::AssignVariable || dims[j] != 1)) return false;
  return true;
}

// Integers wrap (the eager kernels are built with -fwrapv); floats are plain IEEE arithmetic.
template <class T>
T combine(OpKind op, T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(op == OpKind::AssignAddVariable ? static_cast<U>(a) + static_cast<U>(b)
                                                          : static_cast<U>(a) - static_cast<U>(b));
  } else {
    return op == OpKind::AssignAddVariable ? a + b : a - b;
  }
}

// dst (the variable's shape) = dst op src, or = src for assign; src broadcasts (operand_fits).
template <class T>
void update(OpKind op, T* dst, const T* src, const Shape& var, const int64_t* dims, int64_t rank) {
  const int64_t n = var.num_elements();
  int64_t src_n = 1;
  for (int64_t j = 0; j < rank; ++j) src_n *= dims[j];
  if (op == OpKind::AssignVariable) {
    if (src_n == n) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    else for (int64_t k = 0; k < n; ++k) dst[k] = src[0];  // a scalar fills the variable
    return;
  }
  if constexpr (!std::is_same_v<T, bool> && !is_half_float_v<T> && sizeof(T) >= 4) {  // (storage dtypes: assign only)
    if (src_n == n) {
      for (int64_t k = 0; k < n; ++k) dst[k] = combine(op, dst[k], src[k]);
    } else if (src_n == 1) {
      const T b = src[0];
      for (int64_t k = 0; k < n; ++k) dst[k] = combine(op, dst[k], b);
    } else {
      // General broadcast: walk the variable's index, the operand's stride 0 where its dim is 1.
      const int64_t r = var.rank(), lead = r - rank;
      int64_t stride[8] = {}, idx[8] = {};
      for (int64_t j = rank - 1, s = 1; j >= 0; --j) {
        stride[lead + j] = dims[j] == 1 ? 0 : s;
        s *= dims[j];
      }
      int64_t off = 0;
      for (int64_t k = 0; k < n; ++k) {
        dst[k] = combine(op, dst[k], src[off]);
        for (int64_t d = r - 1; d >= 0; --d) {
          off += stride[d];
          if (++idx[d] < var[d]) break;
          off -= stride[d] * idx[d];
          idx[d] = 0;
        }
      }
    }
  }
}

void assign(const NodeInfo& info, VariableState& v, const JitArg& in, void* result) {
  const Node& n = *info.node;
  const int64_t rank = info.input_types[0].shape.rank();
  std::lock_guard lock(v.mu);  // one whole read-modify-write, as eagerly
  if (!operand_fits(n.op, v.shape, in.dims, rank)) {
    // Rare: the eager kernel raises the error (or computes the value) exactly as eagerly.
    v.value = detail::assigned_value(n.op, v, v.value, view_of(in, info.input_types[0]), n.loc);
  } else {
    void* dst = writable_value(v, n.op != OpKind::AssignVariable);
    visit_dtype(v.dtype, [&](auto tag) {
      using T = decltype(tag);
      update<T>(n.op, static_cast<T*>(dst), static_cast<const T*>(in.data), v.shape, in.dims, rank);
    });
  }
  if (result && value_bytes(v)) std::memcpy(result, ag::detail::impl_of(v.value)->data, value_bytes(v));
}

// Runs `body(node)` for node `node` of the call's program: 0, or 1 with its error recorded (a
// tensor that could not be allocated reported as the eager op's out-of-memory error).
template <class F>
int32_t node_guarded(JitCallCtx* ctx, int32_t node, F&& body) {
  CallState& st = *ctx->state;
  const Node& n = *st.program->nodes[static_cast<size_t>(node)].node;
  try {
    body(n);
    return 0;
  } catch (const detail::TensorAllocationFailure& f) {
    st.error = std::make_exception_ptr(detail::out_of_memory(detail::user_op_name(n.op), f.dtype, f.shape, n.loc));
  } catch (...) {
    st.error = std::current_exception();
  }
  return 1;
}

// A draw's words from its Generator's state (one locked step, as eagerly).
std::pair<uint64_t, uint64_t> take_words(const Node& n, void* generator_state) {
  return detail::take_random_words(*static_cast<VariableState*>(generator_state), n.op, n.attrs.shape);
}

}  // namespace
}  // namespace ag::jit

using ag::jit::CallState;
using ag::jit::JitArg;
using ag::jit::JitCallCtx;

extern "C" {

void agc_rt_var_read(void* var, void* dst) {
  const auto& v = *static_cast<const ag::detail::VariableState*>(var);
  std::lock_guard lock(v.mu);  // a whole value, never half of an assignment
  if (const size_t bytes = ag::jit::value_bytes(v)) std::memcpy(dst, ag::detail::impl_of(v.value)->data, bytes);
}

int32_t agc_rt_var_assign_owned(JitCallCtx* ctx, int32_t node, void* var, void* data) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    auto& v = *static_cast<ag::detail::VariableState*>(var);
    const ag::Node& n = *st.program->nodes[static_cast<size_t>(node)].node;
    ag::detail::Storage* storage = st.take_owned(data);
    if (!storage) throw ag::InternalError("jit: an assigned buffer that the call does not own");
    ag::Tensor value = ag::detail::make_view(storage, 0, n.outputs[0].dtype, n.outputs[0].shape);  // retains it
    storage->release();  // the tensor's reference is the one left
    std::lock_guard lock(v.mu);  // replaced whole, as an eager assignment replaces it
    if (v.dtype != value.dtype() || v.shape != value.shape())
      v.value = ag::detail::assigned_value(n.op, v, v.value, value, n.loc);  // the eager kernel's error
    else
      v.value = std::move(value);
  });
}

const void* agc_rt_var_borrow(JitCallCtx* ctx, int32_t slot, void* var) {
  const auto& v = *static_cast<const ag::detail::VariableState*>(var);
  ag::Tensor& held = ctx->state->slots()[static_cast<size_t>(slot)];
  std::lock_guard lock(v.mu);  // a whole value, never half of an assignment
  held = v.value;              // shared from here on: an assignment copies instead of writing into it
  return ag::detail::impl_of(held)->data;
}

void agc_rt_var_release(JitCallCtx* ctx, int32_t slot) { ctx->state->slots()[static_cast<size_t>(slot)] = ag::Tensor(); }

void* agc_rt_var_update_begin(JitCallCtx* ctx, int32_t node, void* var) {
  auto& v = *static_cast<ag::detail::VariableState*>(var);
  void* dst = nullptr;
  v.mu.lock();  // held through the code's loop: one whole read-modify-write, as eagerly
  const int32_t rc = ag::jit::node_guarded(ctx, node, [&](const ag::Node& n) {
    if (v.dtype != n.outputs[0].dtype || v.shape != n.outputs[0].shape)
      throw ag::InternalError("jit: a variable updated in place is not of the type it was traced with");
    dst = ag::jit::writable_value(v, /*keep_contents=*/true);
  });
  if (rc != 0) v.mu.unlock();
  return dst;
}

void agc_rt_var_update_end(void* var) { static_cast<ag::detail::VariableState*>(var)->mu.unlock(); }

int32_t agc_rt_var_assign(JitCallCtx* ctx, int32_t node, void* var, const JitArg* in, void* result) {
  return ag::jit::node_guarded(ctx, node, [&](const ag::Node&) {
    ag::jit::assign(ctx->state->program->nodes[static_cast<size_t>(node)], *static_cast<ag::detail::VariableState*>(var), *in, result);
  });
}

int32_t agc_rt_var_add_scalar(JitCallCtx* ctx, int32_t node, int32_t subtract, void* var, const void* operand,
                              void* result) {
  auto& v = *static_cast<ag::detail::VariableState*>(var);
  const ag::OpKind op = subtract ? ag::OpKind::AssignSubVariable : ag::OpKind::AssignAddVariable;
  {
    std::lock_guard lock(v.mu);  // one whole read-modify-write, as agc_rt_var_assign
    const ag::detail::TensorImpl* impl = ag::detail::impl_of(v.value);
    if (v.shape.rank() == 0 && ag::jit::writable_in_place(impl)) {
      auto add = [&](auto tag) {
        using T = decltype(tag);
        T* dst = static_cast<T*>(impl->data);
        *dst = ag::jit::combine<T>(op, *dst, *static_cast<const T*>(operand));
        if (result) *static_cast<T*>(result) = *dst;
        return 0;
      };
      switch (v.dtype) {
        case ag::DType::Int32: return add(int32_t{});
        case ag::DType::Int64: return add(int64_t{});
        case ag::DType::Float32: return add(float{});
        case ag::DType::Float64: return add(double{});
        default: break;
      }
    }
  }
  const JitArg in{const_cast<void*>(operand), nullptr};  // rank 0: no dims are read
  return agc_rt_var_assign(ctx, node, var, &in, result);
}

int32_t agc_rt_print(JitCallCtx* ctx, int32_t node, const JitArg* ins) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = st.program->nodes[static_cast<size_t>(node)];
    std::vector<ag::Tensor> views;  // headers only: the values stay in the JIT buffers
    views.reserve(info.input_types.size());
    for (size_t k = 0; k < info.input_types.size(); ++k) views.push_back(ag::jit::view_of(ins[k], info.input_types[k]));
    ag::detail::print_line(ag::detail::format_print(info.node->attrs, views));
  });
}

int32_t agc_rt_random(JitCallCtx* ctx, int32_t node, void* generator_state, void* out) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::Node& n = *st.program->nodes[static_cast<size_t>(node)].node;
    const auto [seed, counter] = ag::jit::take_words(n, generator_state);
    ag::detail::kernels().random_fill(n.attrs.dtype, out, n.attrs.shape.num_elements(),
                                      n.op == ag::OpKind::RandomNormal, seed, counter, n.attrs.scalar, n.attrs.scalar2);
  });
}

int32_t agc_rt_random_words(JitCallCtx* ctx, int32_t node, void* generator_state, uint64_t* words) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const auto [seed, counter] = ag::jit::take_words(*st.program->nodes[static_cast<size_t>(node)].node, generator_state);
    words[0] = seed;
    words[1] = counter;
  });
}

int64_t agc_rt_clock(JitCallCtx*) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(ag::detail::ProfileClock::now().time_since_epoch()).count();
}

void agc_rt_profile_node(JitCallCtx* ctx, int32_t node, int64_t begin_ns) {
  if (!ag::detail::profiling()) return;
  const ag::jit::Program& program = *ctx->state->program;
  const ag::Node& n = *program.nodes[static_cast<size_t>(node)].node;
  const ag::detail::ProfileClock::time_point begin{std::chrono::nanoseconds(begin_ns)};
  const auto now = ag::detail::ProfileClock::now();
  ag::detail::profile_event("compiled", ag::detail::user_op_name(n.op), begin, now, n.loc);
  // A node of the function's body: its global id is its index in the graph (ScopePlan).
  ag::detail::profile_node_time(program.graph.get(), static_cast<uint32_t>(node), now - begin);
}

int32_t agc_rt_callback(JitCallCtx* ctx, int32_t node, const JitArg* ins, void* out) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = st.program->nodes[static_cast<size_t>(node)];
    // Copies, not views of the code's buffers: the callback may keep what it is given.
    std::vector<ag::Tensor> in;
    for (size_t k = 0; k < info.input_types.size(); ++k) {
      const ag::Tensor view = ag::jit::view_of(ins[k], info.input_types[k]);
      in.push_back(ag::detail::eval_op(ag::OpKind::Identity, std::span<const ag::Tensor>(&view, 1), ag::Attrs::none(), {}));
    }
    const ag::Tensor r = ag::detail::run_callback(info.node->op, in, info.node->attrs, info.node->loc);
    std::memcpy(out, ag::detail::impl_of(r)->data, static_cast<size_t>(r.num_elements()) * ag::dtype_size(r.dtype()));
  });
}

int32_t agc_rt_collective(JitCallCtx* ctx, int32_t node, const JitArg* ins, void* out) {
  return ag::jit::guarded(ctx, [&](CallState& st) {
    const ag::jit::NodeInfo& info = st.program->nodes[static_cast<size_t>(node)];
    const ag::TensorType& t = info.input_types[0];
    const ag::Shape shape(std::span<const int64_t>(ins[0].dims, static_cast<size_t>(t.shape.rank())));
    ag::detail::run_collective(info.node->op, info.node->attrs, info.node->loc, t.dtype, shape, ins[0].data, out);
  });
}

void agc_rt_assert_failed(JitCallCtx* ctx, int32_t node, const JitArg* ins) {
  CallState& st = *ctx->state;
  try {
    const ag::jit::NodeInfo& info = st.program->nodes[static_cast<size_t>(node)];
    std::vector<ag::Tensor> views;
    for (size_t k = 0; k < info.input_types.size(); ++k) views.push_back(ag::jit::view_of(ins[k], info.input_types[k]));
    ag::detail::check_assertion(views, info.node->attrs, info.node->loc);  // throws the eager error
    st.error = std::make_exception_ptr(ag::InternalError("jit: an assertion failed in compiled code but not eagerly"));
  } catch (...) {
    st.error = std::current_exception();
  }
}

}  // extern "C"
