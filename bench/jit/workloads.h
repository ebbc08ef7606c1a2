// The traced workloads W1-W5 run through ag::function (JIT and interpreter) and eagerly.
#pragma once

#include <ag/ag.h>

namespace bench {

ag::Tensor power(ag::Tensor x);                 // W1: 100 chained 10x10 matmuls (the TF guide)
ag::Tensor collatz(ag::Tensor n);               // W2: staged while with an if inside
ag::Tensor tanh_chain(ag::Tensor x);            // W3: relu(x*a+b)*c - tanh(x)
ag::Tensor cheap_chain(ag::Tensor x);           // W3: maximum(x*a+b, 0)*c + x
ag::Tensor trivial(ag::Tensor x);               // W4: x + 1
ag::Tensor dense_layer(ag::Tensor x, ag::Tensor w, ag::Tensor b);  // W1b: tanh(x @ w + b), small
ag::Tensor sum_squares(ag::Tensor x);           // W3's reduction: reduce_sum(x*x + 1)
ag::Tensor column_sums(ag::Tensor x);           // W3's column reduction: reduce_sum(x, {0})
// W3's row variances, one expression: reduce_mean(square(x - reduce_mean(x, {1}, true)), {1}).
ag::Tensor row_variances(ag::Tensor x);
ag::Tensor row_argmax(ag::Tensor x);            // W3's arg-reduction: argmax(x, 1)
// W5b: 40 layers of tanh(x @ w + b*i), minus each row's max, plus each column's mean; summed.
ag::Tensor dense_stack(ag::Tensor x, ag::Tensor w, ag::Tensor b);
// W6: pi from `batches` batches of kPiBatch uniform points, one batch per staged iteration.
ag::Tensor estimate_pi(ag::random::Generator& g, ag::Tensor batches);
inline constexpr int64_t kPiBatch = 10000;
inline constexpr float kA = 1.5f, kB = -0.25f, kC = 0.75f;

}  // namespace bench
