// maximum/minimum as IEEE 754-2019 defines them, for the eager kernels: NaN propagates, and
// -0 < +0, so the result never depends on the operands' order. It is what compiled code
// computes (llvm.maximum/llvm.minimum), so eager, interpreted and compiled results agree bit
// for bit, signed zeros included (std::max and Eigen's packet max return either zero,
// depending on the operands' order and on the instruction set).
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>

// In the instruction-set level's namespace, like every kernel of src/ops/isa/.
namespace ag::detail::AG_KERNEL_NS {

template <bool kMax>
struct IeeeMaxMin {
  template <class T>
  T operator()(const T& x, const T& z) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x) || std::isnan(z)) return x + z;
      if (x == z) return std::signbit(x) == kMax ? z : x;  // equal: only the zeros' signs differ
      return kMax ? (x < z ? z : x) : (z < x ? z : x);
    } else {
      return kMax ? std::max(x, z) : std::min(x, z);
    }
  }
};

}  // namespace ag::detail::AG_KERNEL_NS
