// Array functions written in other ops (reduce_logsumexp, clip_by_value, broadcast_to, one_hot,
// linspace): their gradients, staging and fusion are their parts'. Arguments are checked here,
// so an error names this function and the caller's line rather than an op inside it.
#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/ops.h"

namespace ag {
namespace {

[[noreturn]] void fail(const char* fn, SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("{}: {}{}", fn, msg, detail::at(loc)));
}

void require_floating(const char* fn, const Tensor& x, SourceLoc loc) {
  if (!is_floating(x.dtype()))
    throw TypeError(fmt::format("{}: needs a floating-point tensor, got {}; use ag::cast(x, ag::float32){}", fn,
                                dtype_name(x.dtype()), detail::at(loc)));
}

}  // namespace

Tensor reduce_logsumexp(const Tensor& x, Axes axes, bool keepdims, Loc loc) {
  require_floating("ag::reduce_logsumexp", x, loc);
  // The max is a constant of the gradient (it cancels); a slice whose max is infinite (all -inf,
  // or a +inf) subtracts 0 instead, so that -inf - -inf gives no NaN.
  const Tensor m = stop_gradient(reduce_max(x, axes, /*keepdims=*/true, loc), loc);
  const Tensor finite_m = where(abs(m, loc) < INFINITY, m, zeros_like(m, loc));
  const Tensor sum = reduce_sum(exp(x - finite_m, loc), axes, /*keepdims=*/true, loc);
  Tensor r = log(sum, loc) + finite_m;
  if (keepdims) return r;
  return axes.all ? reshape(r, Shape{}, loc) : squeeze(r, std::vector<int64_t>(axes.dims.begin(), axes.dims.end()), loc);
}

Tensor clip_by_value(const Tensor& t, Operand clip_value_min, Operand clip_value_max) {
  return minimum(maximum(Operand(t, clip_value_min.loc()), clip_value_min), clip_value_max);
}

Tensor broadcast_to(const Tensor& x, Shape shape, Loc loc) {
  for (int64_t d : shape)
    if (d < 0) fail("ag::broadcast_to", loc, "the shape " + shape.str() + " has an unknown dim; give every dim");
  if (!x.has_unknown_rank()) {
    const Shape& s = x.shape();
    bool fits = s.rank() <= shape.rank();
    for (int64_t k = 1; fits && k <= s.rank(); ++k) {
      const int64_t from = s[s.rank() - k], to = shape[shape.rank() - k];
      fits = from == 1 || from == to || from < 0;
    }
    if (!fits) fail("ag::broadcast_to", loc, fmt::format("cannot broadcast a tensor of shape {} to {}", s.str(), shape.str()));
  }
  // A select whose condition has the target shape broadcasts x to it in any dtype; its gradient
  // sums dy back to x's shape.
  return where(fill(shape, Tensor(true), loc), Operand(x, loc), Operand(x, loc));
}

Tensor one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value, DType dtype, Loc loc) {
  if (indices.dtype() != DType::Int32 && indices.dtype() != DType::Int64)
    throw TypeError(fmt::format("ag::one_hot: needs int32 or int64 indices, got {}{}", dtype_name(indices.dtype()),
                                detail::at(loc)));
  if (depth < 0) fail("ag::one_hot", loc, fmt::format("depth must be at least 0, got {}", depth));
  if (dtype == DType::List) fail("ag::one_hot", loc, "the dtype cannot be a TensorArray");
  const Tensor classes = cast(range(Operand(Tensor(depth), loc)), indices.dtype(), loc);
  const Tensor hot = expand_dims(indices, -1, loc) == classes;
  return where(hot, Operand(cast(Tensor(on_value), dtype, loc), loc), Operand(cast(Tensor(off_value), dtype, loc), loc));
}

Tensor linspace(const Tensor& start, const Tensor& stop, int64_t num, Loc loc) {
  if (num < 1) fail("ag::linspace", loc, fmt::format("num must be at least 1, got {}", num));
  for (const Tensor* t : {&start, &stop})
    if (t->has_unknown_rank() || t->rank() != 0)
      fail("ag::linspace", loc, "start and stop must be scalars, got shape " + (t->has_unknown_rank() ? std::string("[*]") : t->shape().str()));
  const DType d = start.dtype() == DType::Float64 || stop.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor a = cast(start, d, loc), b = cast(stop, d, loc);
  if (num == 1) return reshape(a, Shape{1}, loc);
  const Tensor step = (b - a) / static_cast<double>(num - 1);
  Tensor r = a + cast(range(Operand(Tensor(num), loc)), d, loc) * step;
  // The last value is `stop` itself, not start + (num - 1) * step rounded.
  return concat({slice(r, {0}, {num - 1}, loc), reshape(b, Shape{1}, loc)}, 0, loc);
}

Tensor linspace(double start, double stop, int64_t num, DType dtype, Loc loc) {
  if (!is_floating(dtype)) fail("ag::linspace", loc, fmt::format("needs a floating-point dtype, got {}", dtype_name(dtype)));
  return linspace(cast(Tensor(start), dtype, loc), cast(Tensor(stop), dtype, loc), num, loc);
}

}  // namespace ag
