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

AG_FUNCTION ag::Tensor rnn_final_state(ag::Tensor xs, ag::Tensor w, ag::Tensor u) {
  ag::Tensor h = ag::zeros({xs.shape()[1], u.shape()[0]});
  const ag::Tensor steps = ag::gather(ag::shape_of(xs), 0);
  for (ag::Tensor t = int64_t{0}; t < steps; t += 1) h = (ag::matmul(ag::gather(xs, t), w) + ag::matmul(h, u)) * 0.5f;
  return h;
}

}  // namespace aot_test
