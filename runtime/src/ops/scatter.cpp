// gather_nd, tensor_scatter_nd_update/add and unsorted_segment_sum/max, written over the Index
// family's row ops: an index vector becomes one linear row index into the tensor seen as
// [rows] + its other dims. Arguments are checked here, so errors name the function and the
// caller's line.
#include <fmt/format.h>

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
// a tensor of shape `p` seen as [prod(p[:k])] + p[k:] (`flat`); each index checked against its
// own dim by a staged assert (a linear index in range could still be a wrong one).
struct LinearRows {
  Tensor linear;
  Shape flat;
};
LinearRows linear_rows(const char* fn, const Shape& p, const Tensor& indices, Loc loc) {
  require_indices(fn, indices, loc);
  if (indices.has_unknown_rank() || indices.rank() < 1)
    fail(fn, loc, "needs indices of known rank, with at least one dim");
  const int64_t k = indices.shape()[indices.rank() - 1];
  if (k < 0 || k > p.rank())
    fail(fn, loc, fmt::format("the last dim of indices ({}) must be known and at most the tensor's rank {}", k, p.rank()));
  std::vector<int64_t> strides(static_cast<size_t>(k)), dims(static_cast<size_t>(k));
  int64_t rows = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    if (p[j] < 0) fail(fn, loc, fmt::format("the tensor's dim {} must be known while tracing", j));
    strides[static_cast<size_t>(j)] = rows;
    dims[static_cast<size_t>(j)] = p[j];
    rows *= p[j];
  }
  const Tensor idx = cast(indices, DType::Int64, loc);
  assert_true(logical_and(idx >= int64_t{0}, less(Operand(idx, loc), Operand(constant(dims), loc))),
              fmt::format("{}: every index must be in [0, dim) of the dim it addresses", fn), loc);
  LinearRows r{reduce_sum(multiply(Operand(idx, loc), Operand(constant(strides), loc)), -1, false, loc), Shape{rows}};
  for (int64_t d = k; d < p.rank(); ++d) r.flat.push_back(p[d]);
  return r;
}

// `updates` seen as [K] + the rows' dims, K = the number of index vectors.
Tensor update_rows(const char* fn, const Tensor& updates, const Shape& flat, Loc loc) {
  Shape rows{-1};
  for (int64_t d = 1; d < flat.rank(); ++d) rows.push_back(flat[d]);
  if (updates.has_unknown_rank()) fail(fn, loc, "needs updates of known rank");
  return reshape(updates, rows, loc);
}

Tensor scatter_nd(OpKind op, const char* fn, const Tensor& tensor, const Tensor& indices, const Tensor& updates, Loc loc) {
  if (tensor.has_unknown_rank()) fail(fn, loc, "needs a tensor of known rank");
  const LinearRows r = linear_rows(fn, tensor.shape(), indices, loc);
  // The updates' shape must be indices.shape[:-1] + tensor.shape[k:].
  Shape want(indices.shape().begin(), indices.shape().end() - 1);
  for (int64_t d = 1; d < r.flat.rank(); ++d) want.push_back(r.flat[d]);
  const Shape& got = updates.has_unknown_rank() ? want : updates.shape();
  bool fits = got.rank() == want.rank();
  for (int64_t d = 0; fits && d < want.rank(); ++d) fits = got[d] < 0 || want[d] < 0 || got[d] == want[d];
  if (!fits) fail(fn, loc, fmt::format("updates must have shape {} (indices' dims but the last, then the tensor's dims "
                                       "that an index leaves), got {}", want.str(), got.str()));
  const Tensor flat = detail::apply_op(op, {reshape(tensor, r.flat, loc), reshape(r.linear, {-1}, loc),
                                            update_rows(fn, updates, r.flat, loc)}, Attrs::none(), loc);
  return reshape(flat, tensor.shape(), loc);
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
  const LinearRows r = linear_rows("ag::gather_nd", params.shape(), indices, loc);
  return gather(reshape(params, r.flat, loc), r.linear, 0, loc);
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
