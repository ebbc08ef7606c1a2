// Neural-network functions (tf.nn, jax.nn), written in agc's ops: each is differentiable, fuses
// in compiled code like the ops it is made of, and names the caller's line in its errors.
#pragma once

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag::nn {

// exp(x) / sum(exp(x)) along `axis`, computed as exp(x - max) so that no logit overflows.
Tensor softmax(const Tensor& logits, int64_t axis = -1, Loc loc = Loc::current());
// log(softmax(x)) = x - max - log(sum(exp(x - max))): finite where softmax rounds to 0.
Tensor log_softmax(const Tensor& logits, int64_t axis = -1, Loc loc = Loc::current());
// x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2))); approximate: the tanh form of BERT and GPT-2,
// x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
Tensor gelu(const Tensor& x, bool approximate = false, Loc loc = Loc::current());
// value + bias, bias a vector the size of value's last dim (NHWC's channels).
Tensor bias_add(const Tensor& value, const Tensor& bias, Loc loc = Loc::current());

struct Moments {
  Tensor mean, variance;
};
// The mean and (population) variance over `axes`: auto [mean, variance] = nn::moments(x, {0}).
Moments moments(const Tensor& x, Axes axes, bool keepdims = false, Loc loc = Loc::current());
// x / sqrt(max(sum(x^2), epsilon)) along `axes` (all of them by default).
Tensor l2_normalize(const Tensor& x, Axes axes = {}, double epsilon = 1e-12, Loc loc = Loc::current());

// -sum(labels * log_softmax(logits)) along `axis`: one loss per example. labels is a
// distribution per example (the shape of logits).
Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis = -1,
                                         Loc loc = Loc::current());
// The same with labels as class indices (int32/int64, logits' shape without its last dim). A
// label outside [0, classes) is an InvalidArgumentError naming it (eager, interpreted, compiled).
Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, Loc loc = Loc::current());
// Elementwise logistic loss, max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z:
// no overflow for any logit.
Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, Loc loc = Loc::current());

}  // namespace ag::nn
