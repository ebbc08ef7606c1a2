// Source kernels (constants, ranges, fills) and the constructors of construct.h (random values:
// random.cpp).
#include <cmath>
#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/out_of_memory.h"
#include "kernels.h"

namespace ag::detail {
namespace {

template <class T>
void fill_buffer(Tensor& t, T v) {
  std::fill_n(static_cast<T*>(detail::impl_of(t)->data), t.num_elements(), v);
}

void fill_with(Tensor& t, double f, int64_t i) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || is_half_float_v<T>) fill_buffer<T>(t, convert_value<T>(f));
    else fill_buffer<T>(t, static_cast<T>(i));
  });
}

// Number of elements of range(start, limit, delta), as TensorFlow computes it.
template <class T>
int64_t range_size(T start, T limit, T delta, SourceLoc loc) {
  if (delta == 0) throw InvalidArgumentError(fmt::format("ag::range: delta must not be 0{}", at(loc)));
  if ((delta > 0 && limit <= start) || (delta < 0 && limit >= start)) return 0;
  if constexpr (std::is_integral_v<T>) {
    const auto span = static_cast<uint64_t>(limit > start ? limit - start : start - limit);
    const auto step = static_cast<uint64_t>(delta > 0 ? delta : -delta);
    return static_cast<int64_t>((span + step - 1) / step);
  } else {
    return static_cast<int64_t>(std::ceil(std::abs((static_cast<double>(limit) - start) / delta)));
  }
}

}  // namespace

Tensor source_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  switch (op) {
    case OpKind::Const: return attrs.value;
    case OpKind::Range:
      return visit_compute_dtype(type.dtype, [&](auto tag) -> Tensor {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
          throw InternalError("range of bool");
        } else {
          const T start = static_cast<const T*>(detail::impl_of(in[0])->data)[0];
          const T limit = static_cast<const T*>(detail::impl_of(in[1])->data)[0];
          const T delta = static_cast<const T*>(detail::impl_of(in[2])->data)[0];
          const int64_t n = range_size(start, limit, delta, loc);
          Tensor out = make_tensor(type.dtype, Shape{n});
          T* p = static_cast<T*>(detail::impl_of(out)->data);
          for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<T>(i) * delta);
          return out;
        }
      });
    case OpKind::Fill: {
      Tensor out = make_tensor(type.dtype, type.shape);
      fill_with(out, element_as_double(in[0], 0), element_as_int(in[0], 0));
      return out;
    }
    case OpKind::FillLike: {
      Tensor out = make_tensor(type.dtype, type.shape);
      fill_with(out, attrs.scalar, static_cast<int64_t>(attrs.scalar));
      return out;
    }
    default: throw InternalError("source_kernel: " + std::string(op_name(op)));
  }
}

Tensor constant_from(DType dtype, const Shape& shape, const double* f, const int64_t* i) {
  Tensor t = make_tensor(dtype, shape);
  const int64_t n = shape.num_elements();
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(detail::impl_of(t)->data);
    for (int64_t k = 0; k < n; ++k) p[k] = f ? convert_value<T>(f[k]) : convert_value<T>(i[k]);
  });
  return t;
}

namespace {

void check_concrete_shape(const Shape& shape, const char* what) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError(fmt::format("{}: shape {} has a negative dim", what, shape.str()));
}

}  // namespace
}  // namespace ag::detail

namespace ag {

using detail::make_tensor;

Tensor zeros(const Shape& shape, DType dtype, Loc loc) {
  detail::check_concrete_shape(shape, "ag::zeros");
  Tensor t = detail::make_tensor_for("ag::zeros", dtype, shape, loc);
  detail::fill_with(t, 0, 0);
  return t;
}

Tensor ones(const Shape& shape, DType dtype, Loc loc) {
  detail::check_concrete_shape(shape, "ag::ones");
  Tensor t = detail::make_tensor_for("ag::ones", dtype, shape, loc);
  detail::fill_with(t, 1, 1);
  return t;
}

Tensor eye(int64_t n, DType dtype, Loc loc) {
  if (n < 0) throw ValueError(fmt::format("ag::eye: n must be >= 0, got {}", n));
  Tensor t = detail::make_tensor_for("ag::eye", dtype, Shape{n, n}, loc);
  detail::fill_with(t, 0, 0);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(detail::impl_of(t)->data);
    for (int64_t i = 0; i < n; ++i) p[i * n + i] = detail::convert_value<T>(1);
  });
  return t;
}

Tensor fill(const Shape& shape, const Tensor& value, Loc loc) {
  detail::check_concrete_shape(shape, "ag::fill");
  Attrs a;
  a.shape = shape;
  return detail::apply_op(OpKind::Fill, {value}, a, loc);
}

namespace {
Tensor fill_like(const Tensor& x, double v, Loc loc) {
  Attrs a;
  a.dtype = x.dtype();
  a.scalar = v;
  return detail::apply_op(OpKind::FillLike, {x}, a, loc);
}
}  // namespace

Tensor zeros_like(const Tensor& x, Loc loc) { return fill_like(x, 0, loc); }
Tensor ones_like(const Tensor& x, Loc loc) { return fill_like(x, 1, loc); }

}  // namespace ag
