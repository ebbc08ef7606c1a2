// Broadcast iteration without materializing broadcast operands: the output is walked row by
// row (the last, collapsed dim); each input has an element stride per dim, 0 where it broadcasts.
#pragma once

#include <cstdint>

#include "ag/shape.h"

namespace ag::detail {

struct BroadcastLoop {
  static constexpr int kMaxInputs = 3;
  int rank = 0;  // collapsed rank, >= 1
  int inputs = 0;
  // Only [0, rank) is meaningful. Left uninitialized: zeroing 256 bytes per op showed up in
  // the small-op dispatch profile.
  int64_t dims[Shape::kMaxRank];
  int64_t strides[kMaxInputs][Shape::kMaxRank];

  int64_t inner() const { return dims[rank - 1]; }
  int64_t inner_stride(int k) const { return strides[k][rank - 1]; }
};

// Plans the walk of `out` (already the broadcast shape) over `n` input shapes.
BroadcastLoop plan_broadcast(const Shape& out, const Shape* const* ins, int n);

// Calls row(out_offset, in_offsets) for every output row of length loop.inner().
template <class F>
void for_each_row(const BroadcastLoop& loop, F&& row) {
  const int outer_rank = loop.rank - 1;
  int64_t rows = 1;
  for (int d = 0; d < outer_rank; ++d) rows *= loop.dims[d];
  if (rows == 0 || loop.inner() == 0) return;
  int64_t idx[Shape::kMaxRank] = {};
  int64_t off[BroadcastLoop::kMaxInputs] = {};
  for (int64_t r = 0; r < rows; ++r) {
    row(r * loop.inner(), static_cast<const int64_t*>(off));
    for (int d = outer_rank - 1; d >= 0; --d) {  // odometer increment
      ++idx[d];
      for (int k = 0; k < loop.inputs; ++k) off[k] += loop.strides[k][d];
      if (idx[d] < loop.dims[d]) break;
      for (int k = 0; k < loop.inputs; ++k) off[k] -= loop.strides[k][d] * loop.dims[d];
      idx[d] = 0;
    }
  }
}

// The same walk a plane at a time: plane(out_offset, in_offsets, rows) covers `rows` rows of
// the next-to-last dim, each loop.inner() long (row j of input k at in_offsets[k] + j *
// strides[k][rank - 2]). For short rows, where the odometer per row costs more than the row.
template <class F>
void for_each_plane(const BroadcastLoop& loop, F&& plane) {
  if (loop.rank < 2) {
    for_each_row(loop, [&](int64_t o, const int64_t* off) { plane(o, off, int64_t{1}); });
    return;
  }
  BroadcastLoop outer = loop;  // the rows of the planes: the last dim is the plane's rows
  outer.rank = loop.rank - 1;
  const int64_t rows = loop.dims[loop.rank - 2];
  for_each_row(outer, [&](int64_t o, const int64_t* off) { plane(o * loop.inner(), off, rows); });
}

}  // namespace ag::detail
