// Reductions over axes and arg-reductions. Input dims are grouped into kept/reduced runs; a
// single reduced run is walked in place as (outer, reduced, inner), anything else is first
// transposed so the reduced dims come last.
#include <Eigen/Core>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include <vector>

#include "ag/detail/parallel.h"
#include "ieee_min_max.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

template <class T>
using Row = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using MutRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

struct Layout3 {
  int64_t outer = 1, reduced = 1, inner = 1;
};

// Groups dims; returns false when the reduced dims are not one contiguous run.
bool group_dims(const Shape& s, const Shape& axes, Layout3& l) {
  int state = 0;  // 0: before the reduced run, 1: in it, 2: after it
  for (int64_t i = 0; i < s.rank(); ++i) {
    const bool red = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (s[i] == 1) continue;
    if (red) {
      if (state == 2) return false;
      state = 1;
      l.reduced *= s[i];
    } else if (state == 0) {
      l.outer *= s[i];
    } else {
      state = 2;
      l.inner *= s[i];
    }
  }
  return true;
}

template <class T>
T init_value(OpKind op) {
  switch (op) {
    case OpKind::ReduceProd:
    case OpKind::ReduceAll: return T(1);
    case OpKind::ReduceMax:
      return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    case OpKind::ReduceMin:
      return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    default: return T(0);
  }
}

// Eigen's vectorized max/minCoeff return either zero when the extreme is a zero; IEEE 754-2019
// (ieee_min_max.h) wants +0 from a max that saw a +0, -0 from a min that saw a -0. A second
// pass only when the extreme is a zero keeps the common case at Eigen's speed.
template <bool kMax, class T>
T ieee_signed_zero(T extreme, const T* x, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    if (extreme == T(0)) {
      for (int64_t i = 0; i < n; ++i)
        if (x[i] == T(0) && std::signbit(x[i]) != kMax) return x[i];
      return kMax ? -T(0) : T(0);
    }
  }
  return extreme;
}

template <class T>
T reduce_row(OpKind op, const T* x, int64_t n) {
  if (n == 0) return init_value<T>(op);
  Row<T> r(x, n);
  switch (op) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean: return r.sum();
    case OpKind::ReduceProd: return r.prod();
    case OpKind::ReduceMax: return ieee_signed_zero<true>(r.template maxCoeff<Eigen::PropagateNaN>(), x, n);
    case OpKind::ReduceMin: return ieee_signed_zero<false>(r.template minCoeff<Eigen::PropagateNaN>(), x, n);
    case OpKind::ReduceAny: return static_cast<T>(r.any());
    case OpKind::ReduceAll: return static_cast<T>(r.all());
    default: throw InternalError("reduce_row");
  }
}

template <class T>
void accumulate(OpKind op, MutRow<T>& acc, const Row<T>& x) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == OpKind::ReduceAny) acc = acc || x;
    else if (op == OpKind::ReduceAll) acc = acc && x;
    else throw InternalError("accumulate: numeric reduction of bool");
    return;
  }
  switch (op) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean: acc += x; break;
    case OpKind::ReduceProd: acc *= x; break;
    case OpKind::ReduceMax: acc = acc.binaryExpr(x, IeeeMaxMin<true>()); break;
    case OpKind::ReduceMin: acc = acc.binaryExpr(x, IeeeMaxMin<false>()); break;
    default: throw InternalError("accumulate");
  }
}

// Rows of at most this many elements reduce in a plain loop, left to right: the distances of a
// point to k centroids over [N, k, 2] called an Eigen reduction per 2-element row, 6.5 ns each
// (5.2 ms for 100,000 x 8 rows; issue 39's eager k-means).
constexpr int64_t kShortRow = 4;

template <class T>
void reduce_short_rows(OpKind op, const T* x, T* y, int64_t n, int64_t o0, int64_t o1) {
  auto rows = [&](auto combine) {
    for (int64_t o = o0; o < o1; ++o) {
      const T* row = x + o * n;
      T acc = row[0];
      for (int64_t r = 1; r < n; ++r) acc = combine(acc, row[r]);
      y[o] = acc;
    }
  };
  switch (op) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean: return rows([](T a, T b) { return a + b; });
    case OpKind::ReduceProd: return rows([](T a, T b) { return a * b; });
    case OpKind::ReduceMax: return rows(IeeeMaxMin<true>());
    case OpKind::ReduceMin: return rows(IeeeMaxMin<false>());
    default: throw InternalError("reduce_short_rows");
  }
}

// Outer slices [o0, o1): each independent of the others.
template <class T>
void reduce3_slices(OpKind op, const T* x, T* y, const Layout3& l, int64_t o0, int64_t o1) {
  if constexpr (!std::is_same_v<T, bool>) {
    if (l.inner == 1 && l.reduced >= 1 && l.reduced <= kShortRow && op != OpKind::ReduceAny && op != OpKind::ReduceAll)
      return reduce_short_rows(op, x, y, l.reduced, o0, o1);
  }
  for (int64_t o = o0; o < o1; ++o) {
    const T* base = x + o * l.reduced * l.inner;
    if (l.inner == 1) {
      y[o] = reduce_row(op, base, l.reduced);
      continue;
    }
    MutRow<T> acc(y + o * l.inner, l.inner);
    if (l.reduced == 0) {
      acc.setConstant(init_value<T>(op));
      continue;
    }
    acc = Row<T>(base, l.inner);
    for (int64_t r = 1; r < l.reduced; ++r) accumulate(op, acc, Row<T>(base + r * l.inner, l.inner));
  }
}

// Elements per partial result of a full reduction: fixed, so the partials (and the float
// rounding of their combination) are the same for every thread count.
constexpr int64_t kReduceChunk = kFullReductionChunk;

// One row reduced as partial results of fixed chunks, on the pool, combined in order.
template <class T>
T reduce_row_chunked(OpKind op, const T* x, int64_t n) {
  const int64_t chunks = (n + kReduceChunk - 1) / kReduceChunk;
  // Not std::vector<bool>: its elements share words, and chunks write theirs concurrently.
  using Partial = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;
  std::vector<Partial> partial(static_cast<size_t>(chunks));
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      partial[static_cast<size_t>(c)] = reduce_row(op, x + c * kReduceChunk, std::min(kReduceChunk, n - c * kReduceChunk));
  });
  T r = static_cast<T>(partial[0]);
  for (size_t c = 1; c < partial.size(); ++c) {
    const T p = static_cast<T>(partial[c]);
    if constexpr (std::is_same_v<T, bool>) {
      r = op == OpKind::ReduceAny ? (r || p) : (r && p);
    } else {
      switch (op) {
        case OpKind::ReduceSum:
        case OpKind::ReduceMean: r += p; break;
        case OpKind::ReduceProd: r *= p; break;
        case OpKind::ReduceMax: r = IeeeMaxMin<true>()(r, p); break;
        case OpKind::ReduceMin: r = IeeeMaxMin<false>()(r, p); break;
        default: throw InternalError("reduce_row_chunked");
      }
    }
  }
  return r;
}

// Slices run on the pool when there are many (each computed as on one thread); one huge row is
// reduced in fixed chunks. Either way the result does not depend on the thread count.
template <class T>
void reduce3(OpKind op, const T* x, T* y, const Layout3& l) {
  const int64_t per_slice = std::max<int64_t>(1, l.reduced * l.inner);
  if (l.outer == 1 && l.inner == 1 && l.reduced >= 2 * kReduceChunk) {
    y[0] = reduce_row_chunked(op, x, l.reduced);
  } else if (l.outer >= 2 && l.outer * per_slice >= 2 * kElementwiseGrain) {
    parallel_for(l.outer, std::max<int64_t>(1, kElementwiseGrain / per_slice),
                 [&](int64_t o0, int64_t o1) { reduce3_slices(op, x, y, l, o0, o1); });
  } else {
    reduce3_slices(op, x, y, l, 0, l.outer);
  }
  if (op == OpKind::ReduceMean) {
    const int64_t n = l.outer * l.inner;
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] / static_cast<T>(l.reduced);
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = l.reduced ? static_cast<T>(y[i] / static_cast<T>(l.reduced)) : T(0);
    }
  }
}

// Outputs [k0, k1) of an arg-reduction (output k = o * inner + i), each found by one scan of its
// slice, the first occurrence winning: only a strictly better element replaces the best (a NaN
// first stays; a later one never wins). The best value is kept in a register and replaced by
// selects: a branch on random data mispredicted, and reloading the best element each step
// made the scan of [100000, 8] floats 1.95 ms.
template <bool kMax, class T>
void arg_reduce_range(const T* x, int64_t* y, const Layout3& l, int64_t k0, int64_t k1) {
  int64_t o = k0 / l.inner, i = k0 % l.inner;
  for (int64_t k = k0; k < k1; ++k) {
    const T* p = x + o * l.reduced * l.inner + i;
    int64_t best = 0;
    T best_value = p[0];
    for (int64_t r = 1; r < l.reduced; ++r) {
      const T v = p[r * l.inner];
      const bool better = kMax ? v > best_value : v < best_value;
      best = better ? r : best;
      best_value = better ? v : best_value;
    }
    y[k] = best;
    if (++i == l.inner) i = 0, ++o;
  }
}

template <class T>
void arg_reduce_range(OpKind op, const T* x, int64_t* y, const Layout3& l, int64_t k0, int64_t k1) {
  if (op == OpKind::ArgMax) arg_reduce_range<true>(x, y, l, k0, k1);
  else arg_reduce_range<false>(x, y, l, k0, k1);
}

// Many outputs run on the pool, each computed as on one thread: the same indices for every
// thread count.
template <class T>
void arg_reduce(OpKind op, const T* x, int64_t* y, const Layout3& l) {
  const int64_t outputs = l.outer * l.inner, per_output = std::max<int64_t>(1, l.reduced);
  if (outputs >= 2 && outputs * per_output >= 2 * kElementwiseGrain)
    parallel_for(outputs, std::max<int64_t>(1, kElementwiseGrain / per_output),
                 [&](int64_t k0, int64_t k1) { arg_reduce_range(op, x, y, l, k0, k1); });
  else
    arg_reduce_range(op, x, y, l, 0, outputs);
}

}  // namespace

Tensor reduce_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  const Tensor& x = in[0];
  const Shape& s = x.shape();
  if (op_class(op) == OpClass::ArgReduce) {
    const int64_t axis = normalize_axis(attrs.axis, s.rank(), op, loc);
    if (s[axis] == 0)
      throw InvalidArgumentError(fmt::format("{}: cannot take the arg-{} of an empty dimension (shape {}){}",
                                             user_op_name(op), op == OpKind::ArgMax ? "max" : "min", s.str(), at(loc)));
    Layout3 l;
    for (int64_t i = 0; i < s.rank(); ++i) (i < axis ? l.outer : i == axis ? l.reduced : l.inner) *= s[i];
    Tensor out = make_tensor(DType::Int64, type.shape);
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      arg_reduce<T>(op, static_cast<const T*>(detail::impl_of(x)->data), static_cast<int64_t*>(detail::impl_of(out)->data), l);
    });
    return out;
  }

  Layout3 l;
  Tensor src = x;
  if (!group_dims(s, attrs.axes(), l)) {
    // Move reduced dims last, then reduce one run.
    Shape perm, axes;
    for (int64_t i = 0; i < s.rank(); ++i)
      if (std::find(attrs.axes().begin(), attrs.axes().end(), i) == attrs.axes().end()) perm.push_back(i);
    for (int64_t a : attrs.axes()) {
      axes.push_back(perm.rank());
      perm.push_back(a);
    }
    src = transpose_copy(x, perm);
    l = {};
    group_dims(src.shape(), axes, l);
  }
  Tensor out = make_tensor(type.dtype, type.shape);
  visit_compute_dtype(type.dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce3<T>(op, static_cast<const T*>(detail::impl_of(src)->data), static_cast<T*>(detail::impl_of(out)->data), l);
  });
  return out;
}

}  // namespace ag::detail::AG_KERNEL_NS
