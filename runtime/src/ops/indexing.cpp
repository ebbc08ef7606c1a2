// NumPy-style indexing (Tensor::operator()) and functional updates (Tensor::at), written in the
// Slice, Gather, Squeeze, ExpandDims, SliceUpdate and (a strided update) TensorScatterUpdate ops: their gradients and staging are those
// ops'. Every index resolves while tracing against the static shape.
#include "ag/indexing.h"

#include <fmt/format.h>

#include <algorithm>

#include "ag/construct.h"
#include "ag/debugging.h"
#include "ag/detail/ops_internal.h"

namespace ag {
namespace {

// One dim of x as an index selects it: a box [begin, begin + size) (size -1: to the end of a dim
// unknown while tracing), walked with `step` (1, or the rows `rows` of the box), or one element
// whose dim is dropped.
struct DimSelection {
  int64_t begin = 0, size = -1;
  std::vector<int64_t> rows;  // a step other than 1: the box's rows to take, in order
  bool strided = false;
  bool drop = false;
};

struct Resolved {
  std::vector<DimSelection> dims;      // one per dim of x
  std::vector<int64_t> new_axes;       // positions in the result of the newaxis dims
  Loc loc;  // the first index's: the caller's line
};

[[noreturn]] void index_error(SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("indexing a tensor: {}{}", msg, detail::at(loc)));
}

DimSelection resolve_integer(int64_t k, int64_t dim, int64_t d, SourceLoc loc) {
  if (k < 0) {
    if (dim < 0) index_error(loc, fmt::format("a negative index ({}) needs dim {} known while tracing", k, d));
    k += dim;
  }
  if (k < 0 || (dim >= 0 && k >= dim))
    throw InvalidArgumentError(fmt::format("indexing a tensor: index {} is out of range for dim {} of size {}{}",
                                           k < 0 ? k - dim : k, d, dim, detail::at(loc)));
  DimSelection s;
  s.begin = k;
  s.size = 1;
  s.drop = true;
  return s;
}

// NumPy's slice semantics on a known dim: bounds clamp, a negative step walks backwards.
DimSelection resolve_slice(const Slice& sl, int64_t dim, int64_t d, SourceLoc loc) {
  if (sl.step == 0) index_error(loc, fmt::format("the step of dim {} is 0", d));
  DimSelection s;
  if (dim < 0) {
    if (sl.step != 1 || (sl.start.is_set() && sl.start.value() < 0) || (sl.stop.is_set() && sl.stop.value() >= 0))
      index_error(loc, fmt::format("dim {} is unknown while tracing: only [start:] and [start:-k] with start >= 0 are "
                                   "possible; give the dim with ag::ensure_shape",
                                   d));
    s.begin = sl.start.is_set() ? sl.start.value() : 0;
    // Size -1: to the end; -k - 1: through the stop -k (attrs.h), both resolved at run time.
    if (sl.stop.is_set()) s.size = sl.stop.value() - 1;
    return s;
  }
  auto bound = [&](const SliceBound& b, int64_t missing, int64_t lo, int64_t hi) {
    if (!b.is_set()) return missing;
    const int64_t v = b.value() < 0 ? b.value() + dim : b.value();
    return std::clamp(v, lo, hi);
  };
  int64_t first, count;
  if (sl.step > 0) {
    first = bound(sl.start, 0, 0, dim);
    const int64_t stop = bound(sl.stop, dim, 0, dim);
    count = stop > first ? (stop - first + sl.step - 1) / sl.step : 0;
  } else {
    first = bound(sl.start, dim - 1, -1, dim - 1);
    const int64_t stop = bound(sl.stop, -1, -1, dim - 1);
    count = first > stop ? (first - stop - sl.step - 1) / -sl.step : 0;
  }
  if (sl.step == 1 || count <= 1) {
    s.begin = count > 0 ? first : 0;
    s.size = count;
    return s;
  }
  // The box from the lowest index taken to the highest, then its rows in order.
  const int64_t last = first + (count - 1) * sl.step;
  s.begin = std::min(first, last);
  s.size = std::max(first, last) - s.begin + 1;
  s.strided = true;
  for (int64_t i = 0; i < count; ++i) s.rows.push_back(first + i * sl.step - s.begin);
  return s;
}

Resolved resolve(const Tensor& x, std::span<const Index> indices) {
  Resolved r;
  if (!indices.empty()) r.loc = indices[0].loc();
  if (x.has_unknown_rank()) index_error(r.loc, "the tensor has an unknown rank; give it one with ag::ensure_shape");
  const Shape& shape = x.shape();
  int64_t consumed = 0;
  for (const Index& i : indices) consumed += i.kind() != Index::Kind::NewAxis;
  if (consumed > shape.rank())
    index_error(r.loc, fmt::format("{} indices for a tensor of rank {} (shape {})", consumed, shape.rank(), shape.str()));
  int64_t d = 0, out = 0;
  for (const Index& i : indices) {
    switch (i.kind()) {
      case Index::Kind::NewAxis: r.new_axes.push_back(out++); continue;
      case Index::Kind::Integer: r.dims.push_back(resolve_integer(i.integer(), shape[d], d, i.loc())); break;
      case Index::Kind::Slice: r.dims.push_back(resolve_slice(i.slice(), shape[d], d, i.loc())); ++out; break;
      case Index::Kind::All: r.dims.push_back({}); ++out; break;
    }
    ++d;
  }
  for (; d < shape.rank(); ++d) r.dims.push_back({});
  return r;
}

// x(indices...): one slice of the box, a gather per strided dim, the integer dims squeezed, the
// new axes inserted.
Tensor index_tensor(const Tensor& x, std::span<const Index> indices) {
  const Resolved r = resolve(x, indices);
  std::vector<int64_t> begin, size, dropped;
  bool whole = true;
  for (size_t d = 0; d < r.dims.size(); ++d) {
    begin.push_back(r.dims[d].begin);
    size.push_back(r.dims[d].size);
    whole = whole && r.dims[d].begin == 0 && (r.dims[d].size == -1 || r.dims[d].size == x.shape()[static_cast<int64_t>(d)]);
    if (r.dims[d].drop) dropped.push_back(static_cast<int64_t>(d));
  }
  Tensor t = x;
  if (!whole) {  // (the Slice op itself: its sizes may be -k - 1, which ag::slice refuses)
    Attrs a;
    a.slice_begin() = Shape(begin);
    a.slice_size() = Shape(size);
    t = detail::apply_op(OpKind::Slice, {x}, a, r.loc);
  }
  for (size_t d = 0; d < r.dims.size(); ++d)
    if (r.dims[d].strided) t = gather(t, constant(r.dims[d].rows), static_cast<int64_t>(d), r.loc);
  if (!dropped.empty()) t = squeeze(t, dropped, r.loc);
  for (int64_t axis : r.new_axes) t = expand_dims(t, axis, r.loc);
  return t;
}

// x.at(...) with a step other than 1: the box's elements as row-major linear indices into x
// (every index known while tracing), written by one row scatter over x seen flat.
Tensor strided_set(const Tensor& x, const Resolved& r, const Tensor& v, Loc loc) {
  const Shape& shape = x.shape();
  if (!shape.is_fully_defined())
    index_error(loc, fmt::format("x.at(...) with a step other than 1 needs the tensor's shape known while tracing, got {}",
                                 shape.str()));
  Shape kept;
  std::vector<int64_t> linear{0};
  int64_t stride = shape.num_elements();
  for (size_t d = 0; d < r.dims.size(); ++d) {
    const DimSelection& s = r.dims[d];
    const int64_t dim = shape[static_cast<int64_t>(d)];
    stride /= std::max<int64_t>(dim, 1);
    const int64_t n = s.strided ? static_cast<int64_t>(s.rows.size()) : (s.size >= 0 ? s.size : dim - s.begin);
    if (!s.drop) kept.push_back(n);
    std::vector<int64_t> next;
    for (int64_t l : linear)
      for (int64_t i = 0; i < n; ++i) next.push_back(l + (s.begin + (s.strided ? s.rows[static_cast<size_t>(i)] : i)) * stride);
    linear = std::move(next);
  }
  const Tensor update = reshape(broadcast_to(v, kept, loc), Shape{static_cast<int64_t>(linear.size())}, loc);
  const Tensor flat = detail::apply_op(OpKind::TensorScatterUpdate,
                                       {reshape(x, Shape{shape.num_elements()}, loc), constant(linear), update}, Attrs::none(), loc);
  return reshape(flat, shape, loc);
}

}  // namespace

Tensor Tensor::index(std::initializer_list<Index> indices) const { return index_tensor(*this, {indices.begin(), indices.size()}); }

IndexUpdate Tensor::at(Index i0) const { return IndexUpdate(*this, {i0}); }
IndexUpdate Tensor::at(Index i0, Index i1) const { return IndexUpdate(*this, {i0, i1}); }
IndexUpdate Tensor::at(Index i0, Index i1, Index i2) const { return IndexUpdate(*this, {i0, i1, i2}); }
IndexUpdate Tensor::at(Index i0, Index i1, Index i2, Index i3) const { return IndexUpdate(*this, {i0, i1, i2, i3}); }

IndexUpdate::IndexUpdate(Tensor x, std::vector<Index> indices) : x_(std::move(x)), indices_(std::move(indices)) {}

Tensor IndexUpdate::get() const {
  return index_tensor(x_, indices_);
}

Tensor IndexUpdate::set(const Tensor& v, Loc loc) const {
  const Resolved r = resolve(x_, indices_);
  if (!r.new_axes.empty()) index_error(loc, "x.at(...) takes no ag::newaxis");
  if (v.dtype() != x_.dtype())
    throw TypeError(fmt::format("x.at(...).set: the value is {} but the tensor is {}; use ag::cast{}",
                                dtype_name(v.dtype()), dtype_name(x_.dtype()), detail::at(loc)));
  for (const DimSelection& s : r.dims)
    if (s.strided) return strided_set(x_, r, v, loc);
  Shape box, kept;  // the box with and without the dims an integer index drops
  Shape begin;
  bool known = true;
  for (size_t d = 0; d < r.dims.size(); ++d) {
    const DimSelection& s = r.dims[d];
    const int64_t dim = x_.shape()[static_cast<int64_t>(d)];
    const int64_t n = s.size >= 0 ? s.size : (dim >= 0 ? dim - s.begin : Shape::kUnknown);
    known = known && n >= 0;
    begin.push_back(s.begin);
    box.push_back(n);
    if (!s.drop) kept.push_back(n);
  }
  if (known) return detail::slice_update(x_, reshape(broadcast_to(v, kept, loc), box, loc), begin, loc);
  // A box dim unknown while tracing: the value has the box's dims (no broadcasting), checked
  // against the box when the call runs (a to-the-end slice longer than the value would otherwise
  // keep old values silently).
  if (v.has_unknown_rank() || v.rank() != kept.rank())
    index_error(loc, fmt::format("x.at(...).set: with the box {} unknown while tracing, the value must have one dim per "
                                 "indexed dim ({}), got {}",
                                 box.str(), kept.rank(), v.has_unknown_rank() ? std::string("an unknown rank") : v.shape().str()));
  Tensor update = v;
  for (size_t d = 0; d < r.dims.size(); ++d)
    if (r.dims[d].drop) update = expand_dims(update, static_cast<int64_t>(d), loc);
  for (int64_t d = 0; d < box.rank(); ++d)
    if (box[d] < 0 || update.shape()[d] < 0) {
      // [begin:] (size -1), or [begin:-k] (size -k - 1: attrs.h)
      const int64_t size = r.dims[static_cast<size_t>(d)].size, from_end = size < -1 ? -(size + 1) : 0;
      const Tensor extent = ag::maximum(Operand(gather(shape_of(x_, loc), Tensor(d), 0, loc) - (begin[d] + from_end), loc), 0);
      assert_true(equal(Operand(gather(shape_of(update, loc), Tensor(d), 0, loc), loc), Operand(extent, loc)),
                  fmt::format("x.at(...).set: the value's dim {} must be the box's, [{}:{}] of the tensor's dim", d,
                              begin[d], from_end ? std::to_string(-from_end) : std::string()),
                  loc);
    }
  return detail::slice_update(x_, update, begin, loc);
}

Tensor IndexUpdate::add(const Tensor& v, Loc loc) const { return set(ag::add(Operand(get(), loc), Operand(v, loc)), loc); }

}  // namespace ag
