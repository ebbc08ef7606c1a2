// NumPy-style indexing and JAX's functional updates, eager and staged, differentiable:
//
//   x(ag::Slice{1, -1}, ag::all, 0, ag::newaxis)   // x[1:-1, :, 0, np.newaxis]
//   x(ag::Slice{ag::none, ag::none, -1})           // x[::-1]
//   y = x.at(ag::Slice{1, -1}).set(v);              // x.at[1:-1].set(v): a new tensor
//   y = x.at(0, ag::all).add(1.0);                  // x.at[0, :].add(1)
//
// Indices resolve while tracing against the static shape: an integer or a bound may be negative
// (from the end) when its dim is known; a Slice clamps to the dim like NumPy's. An integer out
// of range is an InvalidArgumentError naming it and the line.
#pragma once

#include <initializer_list>
#include <vector>

#include "ag/index.h"
#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

// The box that x.at(...) indexes, and the updates of it. Each returns a new tensor (x is
// immutable); compiled code writes into the result buffer, with the box's copy fused into it.
class IndexUpdate {
 public:
  IndexUpdate(Tensor x, std::vector<Index> indices);
  // x with the box replaced by v, broadcast to the box's shape (the indexed dims' shape: an
  // integer index drops its dim). A C++ number takes x's dtype; a tensor must have it.
  Tensor set(const Tensor& v, Loc loc = Loc::current()) const;
  template <class T>
    requires std::is_arithmetic_v<T>
  Tensor set(T v, Loc loc = Loc::current()) const {
    return set(cast(Tensor(v), x_.dtype(), loc), loc);
  }
  // x with v added to the box.
  Tensor add(const Tensor& v, Loc loc = Loc::current()) const;
  template <class T>
    requires std::is_arithmetic_v<T>
  Tensor add(T v, Loc loc = Loc::current()) const {
    return add(cast(Tensor(v), x_.dtype(), loc), loc);
  }
  // The box's values: x(indices...).
  Tensor get() const;

 private:
  Tensor x_;
  std::vector<Index> indices_;
};

}  // namespace ag
