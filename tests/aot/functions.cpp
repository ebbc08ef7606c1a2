// The functions of functions.h: AG_FUNCTION sources, rewritten before they are traced.
#include "functions.h"

namespace aot_test {

AG_FUNCTION ag::Tensor collatz_steps(ag::Tensor n) {
  ag::Tensor steps = 0;
  while (n > 1) {
    if (n % 2 == 0) n = n / 2;
    else n = 3 * n + 1;
    steps += 1;
  }
  return steps;
}

AG_FUNCTION ag::Tensor soft_clamp(ag::Tensor x, ag::Tensor limit) {
  ag::Tensor y = limit * ag::tanh(x / limit);
  if (ag::reduce_max(ag::abs(x)) < limit) y = x;  // nothing to clamp: unchanged
  return y;
}

}  // namespace aot_test
