// Neural-network functions (tf.nn, jax.nn), written in agc's ops: each is differentiable, fuses
// in compiled code like the ops it is made of, and names the caller's line in its errors.
#pragma once

#include <string_view>

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag::nn {

// ---- Convolutions and pooling (TensorFlow's tf.nn names and conventions): data is NHWC
// ([batch, height, width, channels]), 2-D filters are HWIO ([height, width, in, out]);
// `padding` is "VALID" (windows inside the input) or "SAME" (ceil(size / stride) outputs, the
// input padded with zeros, the odd element after). float32 runs on oneDNN, float64 on agc's
// own loops; all are differentiable (max_pool2d once).

// A size per spatial axis: `2` for both, or `{2, 3}` for (height, width).
struct Size2D {
  int64_t h, w;
  Size2D(int64_t both) : h(both), w(both) {}  // NOLINT(google-explicit-constructor): `strides = 2`
  Size2D(int64_t height, int64_t width) : h(height), w(width) {}
};

// input [N, H, W, C_in] * filters [KH, KW, C_in, C_out] -> [N, H', W', C_out].
Tensor conv2d(const Tensor& input, const Tensor& filters, Size2D strides, std::string_view padding,
              Size2D dilations = 1, Loc loc = Loc::current());
// input [N, W, C_in] * filters [K, C_in, C_out] -> [N, W', C_out] (a conv2d of height 1).
Tensor conv1d(const Tensor& input, const Tensor& filters, int64_t stride, std::string_view padding,
              int64_t dilation = 1, Loc loc = Loc::current());
// The transpose of conv2d (its gradient with respect to its input; "deconvolution"): input
// [N, H, W, in_channels], filters [KH, KW, output_channels, in_channels] -> output_shape
// [N, H', W', output_channels], the shape that conv2d with these filters, strides, padding and
// dilations maps to input's shape (a ValueError when it does not).
Tensor conv2d_transpose(const Tensor& input, const Tensor& filters, const Shape& output_shape, Size2D strides,
                        std::string_view padding, Size2D dilations = 1, Loc loc = Loc::current());
// The maximum (average) of each ksize window, per channel. SAME's padding is never part of a
// window: a border window's maximum is over the input it covers, its average divides by the
// number of input elements it covers.
Tensor max_pool2d(const Tensor& input, Size2D ksize, Size2D strides, std::string_view padding,
                  Loc loc = Loc::current());
Tensor avg_pool2d(const Tensor& input, Size2D ksize, Size2D strides, std::string_view padding,
                  Loc loc = Loc::current());

// ---- Activations, normalization, losses.

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
