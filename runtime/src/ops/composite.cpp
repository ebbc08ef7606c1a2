// Array functions written in other ops (reduce_logsumexp, clip_by_value, broadcast_to, pad,
// tile, roll, meshgrid, norm, one_hot, linspace): their gradients, staging and fusion are their parts'. Arguments are checked here,
// so an error names this function and the caller's line rather than an op inside it.
#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

#include "ag/construct.h"
#include "ag/debugging.h"
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

namespace {

// The static shape of x, or a ValueError naming `fn` when a dim is unknown while tracing.
const Shape& static_shape(const char* fn, const Tensor& x, SourceLoc loc) {
  if (x.has_unknown_rank()) fail(fn, loc, "the tensor has an unknown rank; give it one with ag::ensure_shape");
  for (int64_t d : x.shape())
    if (d < 0) fail(fn, loc, "needs every dim known while tracing, got " + x.shape().str() + "; use ag::ensure_shape");
  return x.shape();
}

// Rows `rows` of x along `axis` (a gather by constant indices: its gradient adds back).
Tensor take(const Tensor& x, const std::vector<int64_t>& rows, int64_t axis, Loc loc) {
  return gather(x, constant(rows), axis, loc);
}

}  // namespace

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings, PadMode mode, double constant_value,
           Loc loc) {
  const Shape& s = static_shape("ag::pad", x, loc);
  if (static_cast<int64_t>(paddings.size()) != s.rank())
    fail("ag::pad", loc, fmt::format("needs one {{before, after}} pair per dim of {}, got {}", s.str(), paddings.size()));
  for (size_t d = 0; d < paddings.size(); ++d) {
    const auto [lo, hi] = paddings[d];
    const int64_t dim = s[static_cast<int64_t>(d)];
    const int64_t most = mode == PadMode::reflect ? dim - 1 : mode == PadMode::symmetric ? dim : INT64_MAX;
    if (lo < 0 || hi < 0 || lo > most || hi > most)
      fail("ag::pad", loc, fmt::format("padding {{{}, {}}} of dim {} (size {}) must be in [0, {}]", lo, hi, d, dim, most));
  }
  if (mode == PadMode::constant) {
    Shape padded;
    std::vector<int64_t> begin;
    for (size_t d = 0; d < paddings.size(); ++d) {
      padded.push_back(s[static_cast<int64_t>(d)] + paddings[d].first + paddings[d].second);
      begin.push_back(paddings[d].first);
    }
    const Tensor background = fill(padded, cast(Tensor(constant_value), x.dtype(), loc), loc);
    return detail::slice_update(background, x, Shape(begin), loc);
  }
  // Mirrored: per dim, the rows of x in the padded order.
  Tensor t = x;
  const int64_t skip = mode == PadMode::reflect ? 1 : 0;  // reflect leaves the edge out
  for (size_t d = 0; d < paddings.size(); ++d) {
    const int64_t dim = s[static_cast<int64_t>(d)];
    const auto [lo, hi] = paddings[d];
    if (lo == 0 && hi == 0) continue;
    std::vector<int64_t> rows;
    for (int64_t k = lo; k >= 1; --k) rows.push_back(k - 1 + skip);
    for (int64_t k = 0; k < dim; ++k) rows.push_back(k);
    for (int64_t k = 1; k <= hi; ++k) rows.push_back(dim - k - skip);
    t = take(t, rows, static_cast<int64_t>(d), loc);
  }
  return t;
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples, Loc loc) {
  const Shape& s = static_shape("ag::tile", x, loc);
  if (static_cast<int64_t>(multiples.size()) != s.rank())
    fail("ag::tile", loc, fmt::format("needs one multiple per dim of {}, got {}", s.str(), multiples.size()));
  Tensor t = x;
  for (size_t d = 0; d < multiples.size(); ++d) {
    if (multiples[d] < 0) fail("ag::tile", loc, fmt::format("multiple {} of dim {} is negative", multiples[d], d));
    if (multiples[d] == 1) continue;
    std::vector<int64_t> rows;
    for (int64_t m = 0; m < multiples[d]; ++m)
      for (int64_t k = 0; k < s[static_cast<int64_t>(d)]; ++k) rows.push_back(k);
    t = take(t, rows, static_cast<int64_t>(d), loc);
  }
  return t;
}

Tensor roll(const Tensor& x, int64_t shift, int64_t axis, Loc loc) { return roll(x, std::vector{shift}, std::vector{axis}, loc); }

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes, Loc loc) {
  if (shifts.size() != axes.size())
    fail("ag::roll", loc, fmt::format("needs one shift per axis, got {} shifts and {} axes", shifts.size(), axes.size()));
  const Shape& s = static_shape("ag::roll", x, loc);
  Tensor t = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k] < 0 ? axes[k] + s.rank() : axes[k];
    if (axis < 0 || axis >= s.rank()) fail("ag::roll", loc, fmt::format("axis {} is out of range for shape {}", axes[k], s.str()));
    const int64_t n = s[axis];
    const int64_t shift = n == 0 ? 0 : ((shifts[k] % n) + n) % n;
    if (shift == 0) continue;
    // The last `shift` elements, then the others.
    std::vector<int64_t> tail_begin(static_cast<size_t>(s.rank()), 0), head_begin(static_cast<size_t>(s.rank()), 0);
    std::vector<int64_t> tail_size(s.begin(), s.end()), head_size(s.begin(), s.end());
    tail_begin[static_cast<size_t>(axis)] = n - shift;
    tail_size[static_cast<size_t>(axis)] = shift;
    head_size[static_cast<size_t>(axis)] = n - shift;
    t = concat({slice(t, tail_begin, tail_size, loc), slice(t, head_begin, head_size, loc)}, axis, loc);
  }
  return t;
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, MeshIndexing indexing, Loc loc) {
  Shape grid;
  for (const Tensor& x : xs) {
    if (x.has_unknown_rank() || x.rank() != 1) fail("ag::meshgrid", loc, "takes vectors");
    grid.push_back(x.shape()[0]);
  }
  const bool xy = indexing == MeshIndexing::xy && xs.size() >= 2;
  if (xy) std::swap(grid[0], grid[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    // Vector i varies along dim i (xy: vectors 0 and 1 trade dims).
    const size_t along = xy && i < 2 ? 1 - i : i;
    Shape shape(std::vector<int64_t>(xs.size(), 1));
    shape[along] = grid[static_cast<int64_t>(along)];
    out.push_back(broadcast_to(reshape(xs[i], shape, loc), grid, loc));
  }
  return out;
}

Tensor norm(const Tensor& x, double ord, Axes axes, bool keepdims, Loc loc) {
  require_floating("ag::norm", x, loc);
  if (ord == 2) return sqrt(reduce_sum(square(x, loc), axes, keepdims, loc), loc);
  if (ord == 1) return reduce_sum(abs(x, loc), axes, keepdims, loc);
  if (std::isinf(ord) && ord > 0) return reduce_max(abs(x, loc), axes, keepdims, loc);
  fail("ag::norm", loc, fmt::format("ord must be 1, 2 or INFINITY, got {}", ord));
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
