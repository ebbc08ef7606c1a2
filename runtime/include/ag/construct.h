// Creating tensors: constants, fills, ranges, random values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <vector>

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

namespace detail {
Tensor constant_from(DType dtype, const Shape& shape, const double* fvalues, const int64_t* ivalues);
template <class T>
Tensor constant_from_values(const std::vector<T>& values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements())
    throw ValueError("ag::constant: " + std::to_string(values.size()) + " values do not fill shape " +
                     shape.str());
  std::vector<double> f;
  std::vector<int64_t> i;
  if constexpr (std::is_floating_point_v<T>) f.assign(values.begin(), values.end());
  else i.assign(values.begin(), values.end());
  return constant_from(element_dtype_of<T>(), shape, f.empty() ? nullptr : f.data(), i.empty() ? nullptr : i.data());
}
// Appends the elements of a nested list to `out`, fixing dim `depth` of `shape` on first sight
// and checking it on every later list of the same depth.
template <class T, class E>
void flatten_nested(std::initializer_list<E> list, std::vector<T>& out, Shape& shape, int depth) {
  const auto n = static_cast<int64_t>(list.size());
  if (shape.rank() <= depth) shape.push_back(n);
  else if (shape[depth] != n)
    throw ValueError("ag::constant: ragged nested list (a list of " + std::to_string(n) + " elements at depth " +
                     std::to_string(depth) + " where " + std::to_string(shape[depth]) + " were expected)");
  if constexpr (std::is_same_v<E, T>) out.insert(out.end(), list.begin(), list.end());
  else
    for (const auto& inner : list) flatten_nested(inner, out, shape, depth + 1);
}
template <class L, class T>
Tensor constant_nested(L list) {
  std::vector<T> flat;
  Shape shape;
  flatten_nested(list, flat, shape, 0);
  return constant_from_values(flat, shape);
}
}  // namespace detail

// ag::constant(5), ag::constant({1, 2, 3}), ag::constant({{1.f, 2.f}, {3.f, 4.f}}).
template <Arithmetic T>
Tensor constant(T v) {
  return Tensor(v);
}
template <Arithmetic T>
Tensor constant(std::initializer_list<T> v) {
  return detail::constant_nested<decltype(v), T>(v);
}
template <Arithmetic T>
Tensor constant(std::initializer_list<std::initializer_list<T>> v) {
  return detail::constant_nested<decltype(v), T>(v);
}
template <Arithmetic T>
Tensor constant(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v) {
  return detail::constant_nested<decltype(v), T>(v);
}
template <Arithmetic T>
Tensor constant(std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>> v) {
  return detail::constant_nested<decltype(v), T>(v);
}
// ag::constant(values, shape): values in row-major order.
template <Arithmetic T>
Tensor constant(const std::vector<T>& values, const Shape& shape) {
  return detail::constant_from_values(values, shape);
}
template <Arithmetic T>
Tensor constant(const std::vector<T>& values) {
  return detail::constant_from_values(values, Shape{static_cast<int64_t>(values.size())});
}

// `loc` (defaulted: the caller's line) names the call in errors, e.g. when memory runs out.
Tensor zeros(const Shape& shape, DType dtype = float32, Loc loc = Loc::current());
Tensor ones(const Shape& shape, DType dtype = float32, Loc loc = Loc::current());
// A tensor of `shape` filled with a scalar `value` (its dtype is the value's).
Tensor fill(const Shape& shape, const Tensor& value, Loc loc = Loc::current());
Tensor zeros_like(const Tensor& x, Loc loc = Loc::current());
Tensor ones_like(const Tensor& x, Loc loc = Loc::current());
Tensor eye(int64_t n, DType dtype = float32, Loc loc = Loc::current());
// [start, limit) by delta. The dtype comes from the arguments (a tensor's, else the C++ types').
Tensor range(Operand limit);
Tensor range(Operand start, Operand limit, Operand delta = 1);
// Stateless: the values are a pure function of (shape, dtype, parameters, seed), so a traced
// function holds them as constants. For numbers drawn anew on every call use ag/random.h
// (ag::random::uniform / normal, or an ag::random::Generator).
// Integers are uniform in [minval, maxval).
Tensor random_uniform(const Shape& shape, DType dtype = float32, double minval = 0, double maxval = 1,
                      uint64_t seed = 0, Loc loc = Loc::current());
Tensor random_normal(const Shape& shape, DType dtype = float32, double mean = 0, double stddev = 1,
                     uint64_t seed = 0, Loc loc = Loc::current());

}  // namespace ag
