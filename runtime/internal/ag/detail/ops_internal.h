// The op machinery shared by eager execution, tracing, graph passes, the interpreter and the JIT.
#pragma once

#include <atomic>
#include <span>
#include <string>

#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag::detail {

// The static type of `op`'s result for inputs of the given types. Unknown dims propagate.
// Throws TypeError / ValueError naming the op, the operands and their types.
TensorType infer_type(OpKind op, std::span<const TensorType> inputs, const Attrs& attrs, SourceLoc loc);

// The most specific type both a and b fit: dims that differ become unknown, an untyped List
// takes the other side's element shape. a and b have the same dtype and (unless untyped) rank.
TensorType join_types(const TensorType& a, const TensorType& b);

// Runs a non-control op on concrete inputs (the eager path and the graph interpreter).
Tensor eval_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc);

// The entry point of every op: eager when all inputs are concrete, recorded into the graph
// being traced when one is symbolic.
Tensor apply_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc);
inline Tensor apply_op(OpKind op, std::initializer_list<Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  return apply_op(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs, loc);
}

// A hook that replaces the eager kernels of apply_op when set (nullptr: none). The runtime
// tests use it to run every eager op as a one-node graph through optimize() and the
// interpreter (tests/runtime/via_graph_env.cpp). A process-wide pointer rather than a second
// copy of apply_op, so it works with a shared library and with LTO; it costs a relaxed load.
using EagerOpHook = Tensor (*)(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc);
extern std::atomic<EagerOpHook> g_eager_op_hook;

// Whether `op` runs on the storage dtypes (uint8, int8, float16, bfloat16) as they are: sources,
// data movement, casts, selects, state and control flow. apply_op widens the inputs of every
// other op to their compute_dtype and casts its result back to the dtype its type rule gives.
bool runs_on_storage_dtypes(OpKind op);

// visit_dtype for kernels that compute: the five compute dtypes only (apply_op has widened the
// storage dtypes before any kernel sees them).
template <class F>
decltype(auto) visit_compute_dtype(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(bool{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: break;
  }
  throw InternalError(std::string("a computing kernel reached dtype ") + std::string(dtype_name(d)) +
                      " (apply_op widens the storage dtypes)");
}

// The static type of a tensor (concrete or symbolic).
TensorType type_of(const Tensor& t);
// The rank of an operand of `op` that needs one (axes, permutations): ValueError naming the op
// and the line when the tensor's rank is unknown while tracing.
int64_t known_rank(const Tensor& t, OpKind op, SourceLoc loc);

struct WeakScalar;  // ag/ops.h
// A weak C++ scalar as a scalar tensor of `target`, the dtype of what it is combined with
// (docs/eager.md, "Dtype rules"): TypeError when its kind cannot take that dtype (a floating
// value for an integer tensor, a bool for a number or a number for a bool), ValueError when
// an integer does not fit int32.
Tensor weak_scalar_as(const WeakScalar& w, DType target, OpKind op, SourceLoc loc);

// Checks that `t` can be read by `op`: it has a value, is not an undefined variable and is
// not a loop variable a staged loop may not have set.
void check_readable(const Tensor& t, OpKind op, SourceLoc loc);

// The user-facing name of an op ("ag::add", "ag::reduce_sum").
const char* user_op_name(OpKind op);
// " (at file.cpp:12)" or "".
std::string at(SourceLoc loc);
// The row-major multi-index of flat element `k` of `shape`: "[1, 0]".
std::string element_index_str(const Shape& shape, int64_t k);

// PureCallback / IoCallback (callback.cpp): the user's function on `in`, its result checked
// against the spec; an exception it throws becomes an InvalidArgumentError with the line. The
// eager kernel, which the interpreter and compiled code (agc_rt_callback) run too.
Tensor run_callback(OpKind op, std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc);

// Broadcast two static shapes (unknown dims allowed). `what` names the op for errors.
Shape broadcast_shapes(const Shape& a, const Shape& b, OpKind op, SourceLoc loc);
// `x` with `update` written over the box of update's shape at `begin` (the SliceUpdate op:
// x.at(...).set, and the gradient of a slice).
Tensor slice_update(const Tensor& x, const Tensor& update, const Shape& begin, SourceLoc loc);
// Normalizes a possibly negative axis against `rank` (ValueError when out of range).
int64_t normalize_axis(int64_t axis, int64_t rank, OpKind op, SourceLoc loc);

}  // namespace ag::detail
