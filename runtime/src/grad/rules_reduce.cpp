// Gradient rules of reductions, scans and matmul. A reduction's gradient is its upstream gradient given
// back the reduced dims (expand_dims, in ascending order) and broadcast over them; reduce_max /
// reduce_min share it among the elements equal to the extremum, as TensorFlow does.
#include "rules.h"

#include "ag/construct.h"

namespace ag::detail {
namespace {

// `g` (a reduction's result or its gradient) with the reduced dims of size 1 again.
Tensor keep_dims(const GradContext& c, Tensor g) {
  if (c.attrs.keepdims) return g;
  for (int64_t axis : c.attrs.axes()) g = expand_dims(g, axis);  // axes are sorted
  return g;
}

// The number of elements each result element reduced, in the gradient's dtype.
Tensor reduced_count(const GradContext& c) {
  const std::vector<int64_t> axes(c.attrs.axes().begin(), c.attrs.axes().end());
  if (axes.empty()) return cast(Tensor(int64_t{1}), c.dys[0].dtype());
  return cast(reduce_prod(gather(shape_of(c.inputs[0]), constant(axes))), c.dys[0].dtype());
}

}  // namespace

// A running sum's gradient is the running sum of dy the other way.
std::vector<Tensor> grad_cumsum(const GradContext& c) {
  const Shape& f = c.attrs.scan_flags();
  return {cumsum(c.dys[0], c.attrs.axis, f[0] != 0, f[1] == 0)};
}
// TensorFlow's: cumsum(y * dy) the other way, divided by x (so not for x with zeros).
std::vector<Tensor> grad_cumprod(const GradContext& c) {
  const Shape& f = c.attrs.scan_flags();
  const Tensor& x = c.inputs[0];
  const Tensor y = cumprod(x, c.attrs.axis, f[0] != 0, f[1] != 0);
  return {cumsum(y * c.dys[0], c.attrs.axis, f[0] != 0, f[1] == 0) / x};
}

std::vector<Tensor> grad_reduce_sum(const GradContext& c) { return {keep_dims(c, c.dys[0]) * ones_like(c.inputs[0])}; }

std::vector<Tensor> grad_reduce_mean(const GradContext& c) {
  return {keep_dims(c, c.dys[0] / reduced_count(c)) * ones_like(c.inputs[0])};
}

std::vector<Tensor> grad_reduce_extremum(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor hit = cast(equal(x, keep_dims(c, c.outputs[0])), x.dtype());
  const std::vector<int64_t> axes(c.attrs.axes().begin(), c.attrs.axes().end());
  return {keep_dims(c, c.dys[0]) * hit / reduce_sum(hit, axes, /*keepdims=*/true)};
}

// d prod / d x_i = the product of the others, exactly, also with zeros: with no zero it is
// prod / x_i; with one zero, the product of the nonzero elements at the zero and 0 elsewhere;
// with more, 0 everywhere.
std::vector<Tensor> grad_reduce_prod(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const std::vector<int64_t> axes(c.attrs.axes().begin(), c.attrs.axes().end());
  const Tensor zero = x == 0;
  const Tensor nonzero_product = reduce_prod(where(zero, 1, x), axes, /*keepdims=*/true);
  const Tensor zeros_counted = reduce_sum(cast(zero, DType::Int32), axes, /*keepdims=*/true);
  const Tensor others = where(zero, where(zeros_counted == 1, nonzero_product, 0),
                              where(zeros_counted == 0, nonzero_product / where(zero, 1, x), 0));
  return {keep_dims(c, c.dys[0]) * others};
}

// TensorFlow's _MatMulGrad: each gradient is one product with transpose flags, never a
// Transpose node (inside a staged loop, a transpose of a loop-invariant operand ran every
// iteration). With c = op(a) op(b): da = g op(b)^T, db = op(a)^T g, each laid out as its input.
std::vector<Tensor> grad_matmul(const GradContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const Tensor& g = c.dys[0];
  const bool ta = c.attrs.transpose_a(), tb = c.attrs.transpose_b();
  const Tensor da = ta ? matmul(b, g, tb, true) : matmul(g, b, false, !tb);
  const Tensor db = tb ? matmul(g, a, true, ta) : matmul(a, g, !ta, false);
  return {unbroadcast(da, a, c.loc), unbroadcast(db, b, c.loc)};
}

}  // namespace ag::detail
