// The Index family's kernels: argsort, take_along_axis and its gradient, and the row scatters
// (tensor_scatter_nd_update/add, unsorted_segment_sum/max) that the public functions reduce
// to: base [rows, ...] with updates [K, ...] written, added or maxed into rows indices[K].
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "../kernels.h"

namespace ag::detail {
namespace {

// [outer, n, inner] around `axis`.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int64_t axis) {
  AxisSplit a;
  for (int64_t d = 0; d < axis; ++d) a.outer *= s[d];
  a.n = s[axis];
  for (int64_t d = axis + 1; d < s.rank(); ++d) a.inner *= s[d];
  return a;
}

// Ascending: NaN after every number (NumPy's order); descending is its reverse but for ties,
// which keep their index order in both (a stable sort).
template <class T>
void argsort_kernel(const T* x, int32_t* out, const AxisSplit& a, bool descending) {
  std::vector<int32_t> order(static_cast<size_t>(a.n));
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      const T* base = x + o * a.n * a.inner + i;
      auto at = [&](int32_t k) { return base[static_cast<int64_t>(k) * a.inner]; };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int32_t l, int32_t r) {
        const T u = at(l), v = at(r);
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(u) || std::isnan(v)) return descending ? std::isnan(u) && !std::isnan(v) : !std::isnan(u) && std::isnan(v);
        }
        return descending ? v < u : u < v;
      });
      int32_t* dst = out + o * a.n * a.inner + i;
      for (int64_t k = 0; k < a.n; ++k) dst[k * a.inner] = order[static_cast<size_t>(k)];
    }
}

[[noreturn]] void out_of_range(OpKind op, int64_t index, int64_t dim, SourceLoc loc) {
  throw InvalidArgumentError(fmt::format("{}: index {} is out of range [0, {}){}", user_op_name(op), index, dim, at(loc)));
}

// f(ids) with the index tensor's elements as a typed pointer (int32 or int64: the type rules
// refuse other index dtypes), so the loops read indices without a dtype switch per element (the
// segment sums of issue 39's k-means spent most of their time in element_as_int).
template <class F>
void with_indices(const Tensor& idx, F&& f) {
  switch (idx.dtype()) {
    case DType::Int32: return f(static_cast<const int32_t*>(impl_of(idx)->data));
    case DType::Int64: return f(static_cast<const int64_t*>(impl_of(idx)->data));
    default: throw InternalError(fmt::format("index kernel: indices of dtype {}", dtype_name(idx.dtype())));
  }
}

// TakeAlongAxis: out[o, k, i] = x[o, idx[o, k, i], i]. TakeAlongAxisGrad: out = zeros of x's
// shape with dy[o, k, i] added at [o, idx[o, k, i], i].
void take_along_axis(OpKind op, std::span<const Tensor> in, int64_t axis, void* out, SourceLoc loc) {
  const bool grad = op == OpKind::TakeAlongAxisGrad;
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  const AxisSplit xs = split_at(x.shape(), axis), is = split_at(idx.shape(), axis);
  visit_compute_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = static_cast<T*>(out);
    const T* src = static_cast<const T*>(impl_of(grad ? in[2] : x)->data);
    if (grad) std::fill_n(y, x.num_elements(), T{});
    with_indices(idx, [&](const auto* ids) {
      for (int64_t o = 0; o < is.outer; ++o)
        for (int64_t k = 0; k < is.n; ++k)
          for (int64_t i = 0; i < is.inner; ++i) {
            const int64_t at = (o * is.n + k) * is.inner + i;
            const int64_t j = static_cast<int64_t>(ids[at]);
            if (j < 0 || j >= xs.n) out_of_range(op, j, xs.n, loc);
            const int64_t from = (o * xs.n + j) * xs.inner + i;
            if (grad) {
              if constexpr (!std::is_same_v<T, bool>) y[from] = static_cast<T>(y[from] + src[at]);
            } else {
              y[at] = src[from];
            }
          }
    });
  });
}

// f(width): the row width as a compile-time constant when it is a few elements (the row's
// combines then straight-line code: a segment sum of 100,000 points in the plane took 168 µs
// with a loop of two per row, 94 µs without), else as it is.
template <class F>
void with_row_width(int64_t row, F&& f) {
  switch (row) {
    case 1: return f(std::integral_constant<int64_t, 1>{});
    case 2: return f(std::integral_constant<int64_t, 2>{});
    case 3: return f(std::integral_constant<int64_t, 3>{});
    case 4: return f(std::integral_constant<int64_t, 4>{});
    default: return f(row);
  }
}

// base [rows, r...] -> out, then each update row k goes to row indices[k]: written, added or
// maxed. Segment ops drop negative ids (TensorFlow's); the others refuse them.
void scatter_rows(OpKind op, std::span<const Tensor> in, void* out, SourceLoc loc) {
  const Tensor &base = in[0], &idx = in[1], &upd = in[2];
  const int64_t rows = base.shape()[0], k = idx.num_elements();
  const int64_t row = rows == 0 ? 0 : base.num_elements() / rows;
  const bool segments = op == OpKind::UnsortedSegmentSum || op == OpKind::UnsortedSegmentMax;
  visit_compute_dtype(base.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = static_cast<T*>(out);
    const T* u = static_cast<const T*>(impl_of(upd)->data);
    if (base.num_elements() > 0) std::memcpy(y, impl_of(base)->data, static_cast<size_t>(base.num_elements()) * sizeof(T));
    // One loop per op (the op is not tested per element), in index order as before.
    auto rows_by = [&](auto combine) {
      with_indices(idx, [&](const auto* ids) {
        with_row_width(row, [&](auto width) {
          for (int64_t j = 0; j < k; ++j) {
            const int64_t r = static_cast<int64_t>(ids[j]);
            if (segments && r < 0) continue;
            if (r < 0 || r >= rows) [[unlikely]]
              out_of_range(op, r, rows, loc);
            T* dst = y + r * width;
            const T* src = u + j * width;
            for (int64_t e = 0; e < width; ++e) combine(dst[e], src[e]);
          }
        });
      });
    };
    if constexpr (std::is_same_v<T, bool>) {
      if (op == OpKind::TensorScatterUpdate) rows_by([](T& d, T s) { d = s; });
      else rows_by([](T& d, T s) { d = d || s; });
    } else if (op == OpKind::TensorScatterUpdate) {
      rows_by([](T& d, T s) { d = s; });
    } else if (op == OpKind::UnsortedSegmentMax) {
      rows_by([](T& d, T s) {
        if (s > d || (s != s)) d = s;  // a NaN propagates
      });
    } else {
      rows_by([](T& d, T s) { d = static_cast<T>(d + s); });
    }
  });
}

}  // namespace

void compute_index_op(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out, SourceLoc loc) {
  switch (op) {
    case OpKind::ArgSort: {
      const Tensor& x = in[0];
      const int64_t axis = normalize_axis(attrs.axis, x.rank(), op, loc);
      visit_compute_dtype(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
          throw InternalError("argsort of bool");
        } else {
          argsort_kernel(static_cast<const T*>(impl_of(x)->data), static_cast<int32_t*>(out), split_at(x.shape(), axis),
                         attrs.sort_flags()[0] != 0);
        }
      });
      return;
    }
    case OpKind::TakeAlongAxis:
    case OpKind::TakeAlongAxisGrad: return take_along_axis(op, in, normalize_axis(attrs.axis, in[0].rank(), op, loc), out, loc);
    case OpKind::TensorScatterUpdate:
    case OpKind::TensorScatterAdd:
    case OpKind::UnsortedSegmentSum:
    case OpKind::UnsortedSegmentMax: return scatter_rows(op, in, out, loc);
    default: throw InternalError(std::string("compute_index_op: ") + std::string(op_name(op)));
  }
}

}  // namespace ag::detail
