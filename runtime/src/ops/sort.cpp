// Sorting: argsort is an op (the Index family); sort, top_k and take_along_axis follow its
// indices (TakeAlongAxis, whose gradient adds dy back at them).
#include <fmt/format.h>

#include <vector>

#include "ag/detail/ops_internal.h"
#include "ag/ops.h"

namespace ag {

Tensor argsort(const Tensor& values, int64_t axis, SortDirection direction, Loc loc) {
  Attrs a;
  a.axis = axis;
  a.sort_flags() = Shape{direction == SortDirection::descending ? 1 : 0};
  return detail::apply_op(OpKind::ArgSort, {values}, a, loc);
}

Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis, Loc loc) {
  Attrs a;
  a.axis = axis;
  return detail::apply_op(OpKind::TakeAlongAxis, {x, indices}, a, loc);
}

Tensor sort(const Tensor& values, int64_t axis, SortDirection direction, Loc loc) {
  return take_along_axis(values, argsort(values, axis, direction, loc), axis, loc);
}

TopK top_k(const Tensor& input, int64_t k, Loc loc) {
  if (input.has_unknown_rank() || input.rank() == 0)
    throw ValueError(fmt::format("ag::top_k: needs a tensor of known rank of at least 1{}", detail::at(loc)));
  const int64_t n = input.shape()[input.rank() - 1];
  if (k < 0 || (n >= 0 && k > n))
    throw ValueError(fmt::format("ag::top_k: k must be in [0, {}] (the last dim), got {}{}", n, k, detail::at(loc)));
  std::vector<int64_t> begin(static_cast<size_t>(input.rank()), 0), size(static_cast<size_t>(input.rank()), -1);
  size.back() = k;
  const Tensor indices = slice(argsort(input, -1, SortDirection::descending, loc), begin, size, loc);
  return {take_along_axis(input, indices, -1, loc), indices};
}

}  // namespace ag
