// FusedConv2D's epilogue (window_kernel.cpp), in place on y [rows, oc]: + bias when given, then
// relu when asked, the same operations in the same order as the Add and Relu the optimizer
// folded in (relu as `x < 0 ? 0 : x`, keeping NaN, as ag::relu). Built per ISA level so that it
// runs in the level's vectors: at the baseline level a LeNet layer's relu (6 channels a row)
// cost 30% of its convolution.
#include <algorithm>

#include "ag/detail/parallel.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {

template <class T>
void conv_epilogue(T* y, const T* bias, bool relu, int64_t rows, int64_t oc) {
  if (oc <= 0) return;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / oc);
  parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    if (!bias) {  // relu alone: one flat loop over the rows' elements
      for (int64_t i = r0 * oc, end = r1 * oc; i < end; ++i) y[i] = y[i] < T(0) ? T(0) : y[i];
      return;
    }
    for (int64_t r = r0; r < r1; ++r) {
      T* row = y + r * oc;
      for (int64_t c = 0; c < oc; ++c) {
        const T v = row[c] + bias[c];
        row[c] = relu && v < T(0) ? T(0) : v;
      }
    }
  });
}
template void conv_epilogue(float*, const float*, bool, int64_t, int64_t);
template void conv_epilogue(double*, const double*, bool, int64_t, int64_t);

}  // namespace ag::detail::AG_KERNEL_NS
