// Scan kernels: cumsum and cumprod along one axis (inclusive or exclusive, forward or reverse).
#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <type_traits>
#include <vector>

#include "kernels.h"

namespace ag::detail {
namespace {

// The type an integer add or multiply wraps in (its unsigned twin); floats are themselves.
template <class T>
struct Wrapping {
  using type = T;
};
template <std::integral T>
struct Wrapping<T> {
  using type = std::make_unsigned_t<T>;
};

template <class T, class Combine>
void scan_into(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse, T identity,
               Combine combine) {
  // Row by row of the axis, all `inner` columns at once: contiguous reads and writes.
  std::vector<T> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), identity);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t row = reverse ? n - 1 - k : k;
      const T* in = x + (o * n + row) * inner;
      T* out = y + (o * n + row) * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const T next = combine(acc[static_cast<size_t>(j)], in[j]);
        out[j] = exclusive ? acc[static_cast<size_t>(j)] : next;
        acc[static_cast<size_t>(j)] = next;
      }
    }
  }
}

}  // namespace

Tensor scan_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  const Tensor& x = in[0];
  const Shape& s = x.shape();
  const int64_t axis = normalize_axis(attrs.axis, s.rank(), op, loc);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  for (int64_t d = axis + 1; d < s.rank(); ++d) inner *= s[d];
  const bool exclusive = attrs.scan_flags()[0] != 0, reverse = attrs.scan_flags()[1] != 0;
  Tensor out = make_tensor(type.dtype, type.shape);
  visit_compute_dtype(type.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError("scan on bool");
    } else {
      const T* xp = static_cast<const T*>(impl_of(x)->data);
      T* yp = static_cast<T*>(impl_of(out)->data);
      // Integers wrap, as compiled code's add and mul do (no signed-overflow UB).
      using W = typename Wrapping<T>::type;
      if (op == OpKind::Cumsum)
        scan_into<T>(xp, yp, outer, s[axis], inner, exclusive, reverse, T(0),
                     [](T a, T b) { return static_cast<T>(static_cast<W>(a) + static_cast<W>(b)); });
      else
        scan_into<T>(xp, yp, outer, s[axis], inner, exclusive, reverse, T(1),
                     [](T a, T b) { return static_cast<T>(static_cast<W>(a) * static_cast<W>(b)); });
    }
  });
  return out;
}

}  // namespace ag::detail
