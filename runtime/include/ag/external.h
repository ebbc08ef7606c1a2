// Tensors over memory agc does not own (zero-copy interop): the base of ag/eigen.h and ag/dlpack.h.
// Not part of <ag/ag.h>: include it (or one of those headers) to opt in.
#pragma once

#include <memory>

#include "ag/dtype.h"
#include "ag/shape.h"
#include "ag/tensor.h"

namespace ag {

// Called exactly once with its context, when the last tensor viewing external memory dies (on
// whichever thread drops it). It must not throw.
using ReleaseFn = void (*)(void* context);

// A concrete tensor viewing `data` — dense, row-major, `shape` of `dtype` — without a copy.
// `data` must be aligned to its element size (any such address works: agc's kernels and
// compiled code assume no more). agc never writes into it, and never frees it: when the last
// tensor viewing it dies (views, Variables, captured constants of traced functions and JIT
// outputs that return it included) `release(context)` is called, exactly once. When this
// throws (a ValueError naming what is wrong), `release` is not called: the memory stays the
// caller's. With `release` null the memory is borrowed: it must outlive every such tensor.
Tensor from_external(const void* data, DType dtype, const Shape& shape, ReleaseFn release, void* context);
// The same, keeping `owner` alive (one reference) until the last tensor viewing `data` dies.
Tensor from_external(const void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner);

// Whether the tensor is concrete and views memory agc does not own.
bool is_external(const Tensor& t);

namespace detail {
// from_external, with `what` (ag::from_eigen, ag::from_dlpack) naming the caller in errors.
Tensor make_external(const void* data, DType dtype, const Shape& shape, ReleaseFn release, void* context,
                     const char* what);
Tensor make_external(const void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner,
                     const char* what);
// The data of a concrete tensor for a zero-copy export (ag::as_eigen, ag::to_dlpack): raises a
// clear error, naming `what`, for a tensor with no value (ValueError), a symbolic one
// (ConversionError) or a TensorArray handle (TypeError).
const void* exported_data(const Tensor& t, const char* what);
}  // namespace detail

}  // namespace ag
