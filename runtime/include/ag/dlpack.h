// DLPack interop: agc tensors to and from PyTorch, NumPy, JAX and others, without a copy.
// Not part of <ag/ag.h>: it needs <dlpack/dlpack.h> (DLPack 0.6 or later; Debian libdlpack-dev).
#pragma once

#include <dlpack/dlpack.h>

#if !defined(DLPACK_VERSION) || DLPACK_VERSION < 60
#error "ag/dlpack.h needs DLPack 0.6 or later (<dlpack/dlpack.h>: Debian libdlpack-dev)"
#endif

#include "ag/external.h"
#include "ag/tensor.h"

namespace ag {

// DLPack's type code of bool (kDLBool, DLPack 0.8), which DLPack 0.6's header does not define:
// agc exports bool tensors as {kDLBool, 8 bits, 1 lane} and imports exactly that.
inline constexpr uint8_t kDLPackBoolCode = 6;

// A DLManagedTensor viewing `t`'s buffer: no copy. It holds a reference to the tensor, so the
// buffer stays alive until the consumer calls its deleter (exactly once, from any thread). The
// consumer must not write through it: agc tensors are immutable and may share their buffer.
// Shape and strides are compact row-major (strides are always given); device kDLCPU; dtypes:
// bool {kDLBool, 8}, int32/int64 {kDLInt}, float32/float64 {kDLFloat}. A symbolic tensor (being
// traced) is a ConversionError, one with no value a ValueError.
DLManagedTensor* to_dlpack(const Tensor& t);

// A tensor viewing a DLManagedTensor's data: no copy. On success agc owns `m`: its deleter is
// called exactly once, when the last tensor viewing the data dies. On error (nothing is
// converted), `m` stays the caller's and its deleter is not called. Accepted: device kDLCPU;
// dtypes as to_dlpack's (one lane); data + byte_offset aligned to the element size; strides null
// or compact row-major (dims of size 1 may have any stride). Anything else is an error naming
// what is wrong — a non-compact layout is rejected, not copied (make the array contiguous
// first), another dtype is a TypeError, another device or layout a ValueError.
Tensor from_dlpack(DLManagedTensor* m);

}  // namespace ag
