// ag::nn (nn.h): neural-network functions written in agc's ops. Arguments are checked first, so
// an error names the function and the caller's line rather than an op inside it.
#include "ag/nn.h"

#include <fmt/format.h>

#include <cmath>

#include "ag/construct.h"
#include "ag/debugging.h"
#include "ag/detail/ops_internal.h"

namespace ag::nn {
namespace {

[[noreturn]] void fail(const char* fn, SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("{}: {}{}", fn, msg, detail::at(loc)));
}

void require_floating(const char* fn, const char* what, const Tensor& x, SourceLoc loc) {
  if (!is_floating(x.dtype()))
    throw TypeError(fmt::format("{}: {} must be a floating-point tensor, got {}; use ag::cast(x, ag::float32){}", fn,
                                what, dtype_name(x.dtype()), detail::at(loc)));
}

// `axis` of x in [0, rank): x must have a known rank.
int64_t checked_axis(const char* fn, const Tensor& x, int64_t axis, SourceLoc loc) {
  if (x.has_unknown_rank())
    fail(fn, loc, "the logits have an unknown rank; give them one with ag::ensure_shape");
  const int64_t rank = x.rank();
  if (rank == 0) fail(fn, loc, "needs at least one dim, got a scalar");
  if (axis < -rank || axis >= rank) fail(fn, loc, fmt::format("axis {} is out of range for rank {}", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

// x - max(x) along axis, the max held constant (it cancels in softmax and its gradient).
Tensor shifted(const Tensor& x, int64_t axis, Loc loc) {
  return subtract(Operand(x, loc), Operand(stop_gradient(reduce_max(x, axis, /*keepdims=*/true, loc), loc), loc));
}

}  // namespace

Tensor softmax(const Tensor& logits, int64_t axis, Loc loc) {
  require_floating("ag::nn::softmax", "logits", logits, loc);
  axis = checked_axis("ag::nn::softmax", logits, axis, loc);
  const Tensor e = exp(shifted(logits, axis, loc), loc);
  return e / reduce_sum(e, axis, /*keepdims=*/true, loc);
}

Tensor log_softmax(const Tensor& logits, int64_t axis, Loc loc) {
  require_floating("ag::nn::log_softmax", "logits", logits, loc);
  axis = checked_axis("ag::nn::log_softmax", logits, axis, loc);
  const Tensor z = shifted(logits, axis, loc);
  return z - log(reduce_sum(exp(z, loc), axis, /*keepdims=*/true, loc), loc);
}

Tensor gelu(const Tensor& x, bool approximate, Loc loc) {
  require_floating("ag::nn::gelu", "x", x, loc);
  if (approximate) {
    const double k = std::sqrt(2.0 / M_PI);
    return x * 0.5 * (tanh((x + x * x * x * 0.044715) * k, loc) + 1.0);
  }
  return x * 0.5 * (erf(x * M_SQRT1_2, loc) + 1.0);
}

Tensor bias_add(const Tensor& value, const Tensor& bias, Loc loc) {
  if (bias.has_unknown_rank() || bias.rank() != 1)
    fail("ag::nn::bias_add", loc, "bias must be a vector (one value per channel)");
  if (value.has_unknown_rank() || value.rank() < 1) fail("ag::nn::bias_add", loc, "value needs at least one dim");
  const int64_t channels = value.shape()[value.rank() - 1];
  if (channels >= 0 && bias.shape()[0] >= 0 && channels != bias.shape()[0])
    fail("ag::nn::bias_add", loc,
         fmt::format("bias has {} values and value has {} channels (its last dim)", bias.shape()[0], channels));
  return add(Operand(value, loc), Operand(bias, loc));
}

Moments moments(const Tensor& x, Axes axes, bool keepdims, Loc loc) {
  require_floating("ag::nn::moments", "x", x, loc);
  const Tensor mean = reduce_mean(x, axes, /*keepdims=*/true, loc);
  // TensorFlow's form: the mean in the squared difference is a constant of the gradient (the
  // sum of x - mean is 0, so its gradient term vanishes).
  const Tensor variance = reduce_mean(square(x - stop_gradient(mean, loc), loc), axes, /*keepdims=*/true, loc);
  if (keepdims) return {mean, variance};
  auto drop = [&](const Tensor& t) {
    return axes.all ? reshape(t, Shape{}, loc) : squeeze(t, std::vector<int64_t>(axes.dims.begin(), axes.dims.end()), loc);
  };
  return {drop(mean), drop(variance)};
}

Tensor l2_normalize(const Tensor& x, Axes axes, double epsilon, Loc loc) {
  require_floating("ag::nn::l2_normalize", "x", x, loc);
  const Tensor sum = reduce_sum(square(x, loc), axes, /*keepdims=*/true, loc);
  return x * rsqrt(maximum(Operand(sum, loc), epsilon), loc);
}

Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis, Loc loc) {
  const char* fn = "ag::nn::softmax_cross_entropy_with_logits";
  require_floating(fn, "logits", logits, loc);
  if (labels.dtype() != logits.dtype())
    throw TypeError(fmt::format("{}: labels ({}) and logits ({}) must have one dtype{}", fn, dtype_name(labels.dtype()),
                                dtype_name(logits.dtype()), detail::at(loc)));
  axis = checked_axis(fn, logits, axis, loc);
  if (!labels.has_unknown_rank() && labels.rank() != logits.rank())
    fail(fn, loc, fmt::format("labels {} and logits {} must have one shape", labels.shape().str(), logits.shape().str()));
  return -reduce_sum(multiply(Operand(labels, loc), Operand(log_softmax(logits, axis, loc), loc)), axis, false, loc);
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, Loc loc) {
  const char* fn = "ag::nn::sparse_softmax_cross_entropy_with_logits";
  require_floating(fn, "logits", logits, loc);
  if (labels.dtype() != DType::Int32 && labels.dtype() != DType::Int64)
    throw TypeError(fmt::format("{}: labels must be int32 or int64 class indices, got {}{}", fn,
                                dtype_name(labels.dtype()), detail::at(loc)));
  checked_axis(fn, logits, -1, loc);
  if (!labels.has_unknown_rank() && labels.rank() + 1 != logits.rank())
    fail(fn, loc, fmt::format("labels {} must have the shape of logits {} without its last dim", labels.shape().str(),
                              logits.shape().str()));
  const int64_t classes = logits.shape()[logits.rank() - 1];
  if (classes < 0) fail(fn, loc, "logits' last dim (the classes) must be known while tracing");
  // TensorFlow raises on a label out of range (on CPU); a one-hot row of zeros would give a loss
  // of 0 instead, silently. The check is an op: it runs in compiled code on every call.
  assert_true(logical_and(labels >= 0, labels < classes),
              fmt::format("{}: every label must be in [0, classes), classes being logits' last dim", fn), loc);
  const Tensor hot = one_hot(labels, classes, 1, 0, logits.dtype(), loc);
  return -reduce_sum(hot * log_softmax(logits, -1, loc), -1, false, loc);
}

Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, Loc loc) {
  const char* fn = "ag::nn::sigmoid_cross_entropy_with_logits";
  require_floating(fn, "logits", logits, loc);
  if (labels.dtype() != logits.dtype())
    throw TypeError(fmt::format("{}: labels ({}) and logits ({}) must have one dtype{}", fn, dtype_name(labels.dtype()),
                                dtype_name(logits.dtype()), detail::at(loc)));
  const Tensor& x = logits;
  const Tensor relu_x = relu(x, loc);
  return subtract(Operand(relu_x, loc), Operand(multiply(Operand(x, loc), Operand(labels, loc)), loc)) +
         log1p(exp(-abs(x, loc), loc), loc);
}

}  // namespace ag::nn
