// gather_nd, tensor_scatter_nd_update/add and unsorted_segment_sum/max, written over the Index
// family's row ops: an index vector becomes one linear row index into the tensor seen as
// [rows] + its other dims. Arguments are checked here, so errors name the function and the
// caller's line.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
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

void require_indices(const char* fn, const Tensor& indices, Loc loc) {
  if (indices.dtype() != DType::Int32 && indices.dtype() != DType::Int64)
    throw TypeError(fmt::format("{}: needs int32 or int64 indices, got {}{}", fn, dtype_name(indices.dtype()), detail::at(loc)));
}

// The index vectors of indices [..., k] as linear row indices (int64, indices.shape[:-1]) into
// tensor `t` seen as [prod(t.shape[:k])] + t.shape[k:] (`flat`); each index checked against its
// own dim by a staged assert (a linear index in range could still be a wrong one). The first
// dim may be unknown while tracing (no stride depends on it): its bound is then read at run time.
struct LinearRows {
  Tensor linear;
  Shape flat;
};
LinearRows linear_rows(const char* fn, const Tensor& t, const Tensor& indices, Loc loc) {
  const Shape& p = t.shape();
  require_indices(fn, indices, loc);
  if (indices.has_unknown_rank() || indices.rank() < 1)
    fail(fn, loc, "needs indices of known rank, with at least one dim");
  const int64_t k = indices.shape()[indices.rank() - 1];
  if (k < 0 || k > p.rank())
    fail(fn, loc, fmt::format("the last dim of indices ({}) must be known and at most the tensor's rank {}", k, p.rank()));
  std::vector<int64_t> strides(static_cast<size_t>(k)), dims(static_cast<size_t>(k));
  int64_t rows = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    if (p[j] < 0 && j > 0) fail(fn, loc, fmt::format("the tensor's dim {} must be known while tracing", j));
    strides[static_cast<size_t>(j)] = rows;
    dims[static_cast<size_t>(j)] = p[j];
    rows = p[j] < 0 ? Shape::kUnknown : rows * p[j];
  }
  const Tensor idx = cast(indices, DType::Int64, loc);
  const Tensor bounds = k > 0 && p[0] < 0 ? slice(shape_of(t, loc), {0}, {k}, loc) : constant(dims);
  assert_true(logical_and(idx >= int64_t{0}, less(Operand(idx, loc), Operand(bounds, loc))),
              fmt::format("{}: every index must be in [0, dim) of the dim it addresses", fn), loc);
  LinearRows r{reduce_sum(multiply(Operand(idx, loc), Operand(constant(strides), loc)), -1, false, loc), Shape{rows}};
  for (int64_t d = k; d < p.rank(); ++d) r.flat.push_back(p[d]);
  return r;
}

// `x` reshaped to `target`. A reshape names at most one unknown dim, so a target with more (a
// tensor's dims after the indexed ones unknown while tracing) is reached only when `x` already
// has its rank and dims: the common case of one index per row, where no reshape is needed.
Tensor reshape_to(const char* fn, const Tensor& x, const Shape& target, Loc loc) {
  const auto unknown = std::count_if(target.begin(), target.end(), [](int64_t d) { return d < 0; });
  if (unknown <= 1) return reshape(x, target, loc);
  bool same = !x.has_unknown_rank() && x.rank() == target.rank();
  for (int64_t d = 0; same && d < target.rank(); ++d) same = target[d] < 0 || x.shape()[d] < 0 || target[d] == x.shape()[d];
  if (!same)
    fail(fn, loc, fmt::format("cannot view a tensor of shape {} as {} while tracing: give the dims after the indexed "
                              "ones static sizes (an input_signature with them known)",
                              x.has_unknown_rank() ? std::string("<unknown rank>") : x.shape().str(), target.str()));
  return x;
}

// `updates` seen as [K] + the rows' dims, K = the number of index vectors; a row dim unknown in
// the tensor is taken from the updates where they know it.
Tensor update_rows(const char* fn, const Tensor& updates, const Shape& flat, Loc loc) {
  if (updates.has_unknown_rank()) fail(fn, loc, "needs updates of known rank");
  Shape rows{-1};
  const int64_t lead = updates.rank() - (flat.rank() - 1);
  for (int64_t d = 1; d < flat.rank(); ++d) rows.push_back(flat[d] >= 0 ? flat[d] : updates.shape()[lead + d - 1]);
  if (lead == 1) rows[0] = updates.shape()[0];
  return reshape_to(fn, updates, rows, loc);
}

Tensor scatter_nd(OpKind op, const char* fn, const Tensor& tensor, const Tensor& indices, const Tensor& updates, Loc loc) {
  if (tensor.has_unknown_rank()) fail(fn, loc, "needs a tensor of known rank");
  const LinearRows r = linear_rows(fn, tensor, indices, loc);
  // The updates' shape must be indices.shape[:-1] + tensor.shape[k:].
  Shape want(indices.shape().begin(), indices.shape().end() - 1);
  for (int64_t d = 1; d < r.flat.rank(); ++d) want.push_back(r.flat[d]);
  const Shape& got = updates.has_unknown_rank() ? want : updates.shape();
  bool fits = got.rank() == want.rank();
  for (int64_t d = 0; fits && d < want.rank(); ++d) fits = got[d] < 0 || want[d] < 0 || got[d] == want[d];
  if (!fits) fail(fn, loc, fmt::format("updates must have shape {} (indices' dims but the last, then the tensor's dims "
                                       "that an index leaves), got {}", want.str(), got.str()));
  const Tensor flat = detail::apply_op(op, {reshape_to(fn, tensor, r.flat, loc), reshape(r.linear, {-1}, loc),
                                            update_rows(fn, updates, r.flat, loc)}, Attrs::none(), loc);
  return reshape_to(fn, flat, tensor.shape(), loc);
}

Tensor segment_op(OpKind op, const char* fn, const Tensor& data, const Tensor& ids, int64_t num_segments, Loc loc) {
  require_indices(fn, ids, loc);
  if (num_segments < 0) fail(fn, loc, fmt::format("num_segments must be at least 0, got {}", num_segments));
  if (data.has_unknown_rank() || ids.has_unknown_rank()) fail(fn, loc, "needs data and segment_ids of known ranks");
  const Shape &d = data.shape(), &s = ids.shape();
  bool prefix = s.rank() <= d.rank();
  for (int64_t i = 0; prefix && i < s.rank(); ++i) prefix = s[i] < 0 || d[i] < 0 || s[i] == d[i];
  if (!prefix) fail(fn, loc, fmt::format("segment_ids' shape {} must be a prefix of data's {}", s.str(), d.str()));
  Shape out{num_segments}, rows{-1};
  for (int64_t i = s.rank(); i < d.rank(); ++i) {
    if (d[i] < 0) fail(fn, loc, fmt::format("data's dim {} (after the segment ids' dims) must be known while tracing", i));
    out.push_back(d[i]);
    rows.push_back(d[i]);
  }
  // An empty segment's maximum is the lowest value of the dtype, as TensorFlow's.
  const Tensor base = op == OpKind::UnsortedSegmentSum
                          ? zeros(out, data.dtype(), loc)
                          : fill(out, cast(Tensor(is_floating(data.dtype()) ? -std::numeric_limits<double>::infinity()
                                                                           : static_cast<double>(data.dtype() == DType::Int32
                                                                                                     ? std::numeric_limits<int32_t>::lowest()
                                                                                                     : std::numeric_limits<int64_t>::lowest())),
                                           data.dtype(), loc),
                                 loc);
  return detail::apply_op(op, {base, reshape(ids, {-1}, loc), reshape(data, rows, loc)}, Attrs::none(), loc);
}

}  // namespace

Tensor gather_nd(const Tensor& params, const Tensor& indices, Loc loc) {
  if (params.has_unknown_rank()) fail("ag::gather_nd", loc, "needs params of known rank");
  const LinearRows r = linear_rows("ag::gather_nd", params, indices, loc);
  return gather(reshape_to("ag::gather_nd", params, r.flat, loc), r.linear, 0, loc);
}

Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates, Loc loc) {
  return scatter_nd(OpKind::TensorScatterUpdate, "ag::tensor_scatter_nd_update", tensor, indices, updates, loc);
}

Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates, Loc loc) {
  return scatter_nd(OpKind::TensorScatterAdd, "ag::tensor_scatter_nd_add", tensor, indices, updates, loc);
}

Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments, Loc loc) {
  return segment_op(OpKind::UnsortedSegmentSum, "ag::unsorted_segment_sum", data, segment_ids, num_segments, loc);
}

Tensor unsorted_segment_max(const Tensor& data, const Tensor& segment_ids, int64_t num_segments, Loc loc) {
  return segment_op(OpKind::UnsortedSegmentMax, "ag::unsorted_segment_max", data, segment_ids, num_segments, loc);
}

}  // namespace ag
