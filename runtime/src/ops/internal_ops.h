// Ops that agc itself applies (the hidden index of a staged for, a condition's != 0, ...). They
// take the location of the user's construct, or none, instead of recording a line of agc's own
// sources; a traced op without a location takes its frame's (the enclosing construct's).
#pragma once

#include "ag/detail/ops_internal.h"

namespace ag::detail {

inline Tensor op(OpKind kind, std::initializer_list<Tensor> inputs, SourceLoc loc, const Attrs& attrs = Attrs::none()) {
  return apply_op(kind, inputs, attrs, loc);
}

// A scalar of `like`'s dtype.
inline Tensor scalar_like(const Tensor& like, int64_t value) {
  return Tensor::make_scalar(like.dtype(), static_cast<double>(value), value);
}

inline Tensor cast_to(const Tensor& x, DType dtype, SourceLoc loc) {
  if (x.dtype() == dtype) return x;
  Attrs a;
  a.dtype = dtype;
  return apply_op(OpKind::Cast, {x}, a, loc);
}

}  // namespace ag::detail
