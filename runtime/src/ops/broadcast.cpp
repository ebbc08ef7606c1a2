// Broadcast planning: per-input strides in output space, then merging of adjacent dims that
// every input walks the same way (both contiguous, or both broadcast).
#include "broadcast.h"

namespace ag::detail {

// The common cases of eager ops on small tensors: every input has the output's shape or is a
// single element. The walk is then one row, planned without the per-dim work below.
static bool plan_one_row(const Shape& out, const Shape* const* ins, int n, BroadcastLoop& loop) {
  for (int k = 0; k < n; ++k)
    if (!(*ins[k] == out) && ins[k]->num_elements() != 1) return false;
  loop.rank = 1;
  loop.inputs = n;
  loop.dims[0] = out.num_elements();
  for (int k = 0; k < n; ++k) loop.strides[k][0] = *ins[k] == out ? 1 : 0;
  return true;
}

BroadcastLoop plan_broadcast(const Shape& out, const Shape* const* ins, int n) {
  BroadcastLoop loop;  // the one object returned on every path (NRVO: no 264-byte copy)
  if (plan_one_row(out, ins, n, loop)) return loop;
  const int rank = static_cast<int>(out.rank());
  int64_t dims[Shape::kMaxRank];
  int64_t strides[BroadcastLoop::kMaxInputs][Shape::kMaxRank];
  for (int k = 0; k < n; ++k) {
    const Shape& s = *ins[k];
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int sd = d - (rank - static_cast<int>(s.rank()));
      const int64_t dim = sd >= 0 ? s[sd] : 1;
      strides[k][d] = (dim == 1 && out[d] != 1) ? 0 : stride;
      stride *= dim;
    }
  }
  for (int d = 0; d < rank; ++d) dims[d] = out[d];

  loop.rank = 0;
  loop.inputs = n;
  // Drop size-1 dims, then merge dim d into the previous kept one when mergeable.
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    if (loop.rank > 0) {
      const int p = loop.rank - 1;
      bool mergeable = true;
      for (int k = 0; k < n; ++k) {
        const bool both_broadcast = loop.strides[k][p] == 0 && strides[k][d] == 0;
        const bool contiguous = loop.strides[k][p] == strides[k][d] * dims[d];
        if (!both_broadcast && !contiguous) mergeable = false;
      }
      if (mergeable) {
        loop.dims[p] *= dims[d];
        for (int k = 0; k < n; ++k) loop.strides[k][p] = strides[k][d];
        continue;
      }
    }
    loop.dims[loop.rank] = dims[d];
    for (int k = 0; k < n; ++k) loop.strides[k][loop.rank] = strides[k][d];
    ++loop.rank;
  }
  if (loop.rank == 0) {  // a scalar result
    loop.rank = 1;
    loop.dims[0] = 1;
    for (int k = 0; k < n; ++k) loop.strides[k][0] = 0;
  }
  return loop;
}

}  // namespace ag::detail
