// Running out of memory for a tensor. make_tensor throws TensorAllocationFailure, a
// std::bad_alloc that knows the tensor's dtype and shape; whoever knows the op and the user's
// line (eval_op for eager ops and the interpreter, the constructors, the JIT's runtime helpers)
// turns it into the ag::ResourceExhaustedError users see, worded the same everywhere.
#pragma once

#include <cstdint>
#include <new>

#include "ag/dtype.h"
#include "ag/error.h"
#include "ag/shape.h"
#include "ag/tensor.h"

namespace ag::detail {

struct TensorAllocationFailure : std::bad_alloc {
  TensorAllocationFailure(DType d, const Shape& s) : dtype(d), shape(s) {}
  const char* what() const noexcept override { return "agc: out of memory allocating a tensor"; }
  DType dtype;
  Shape shape;
};

// "ag::zeros: out of memory allocating a float32 tensor of shape [1048576,1048576]
// (4398046511104 bytes, 4.0 TiB) (at model.cpp:12)". `block_bytes` > 0: compiled code
// allocates the tensor inside one block of that size shared with other intermediate values,
// and that block is what failed.
ResourceExhaustedError out_of_memory(const char* op, DType dtype, const Shape& shape, SourceLoc loc,
                                     int64_t block_bytes = 0);

// make_tensor for a constructor the user called at `loc` as `op` (ag::zeros, ...), which does
// not go through eval_op: out of memory is the ResourceExhaustedError above.
Tensor make_tensor_for(const char* op, DType dtype, const Shape& shape, SourceLoc loc);

}  // namespace ag::detail
