// Gradient rules of the sliding-window ops. conv2d is bilinear in (input, filter): each
// gradient is one of the two backprop ops, and theirs are conv2d and the other backprop op
// (TensorFlow's nn_grad.py), so every order of derivative is a convolution.
#include "ag/detail/ops_internal.h"
#include "rules.h"

namespace ag::detail {

std::vector<Tensor> grad_conv2d(const GradContext& c) {
  const Tensor &x = c.inputs[0], &w = c.inputs[1], &dy = c.dys[0];
  return {apply_op(OpKind::Conv2DBackpropInput, {dy, w, x}, c.attrs, c.loc),
          apply_op(OpKind::Conv2DBackpropFilter, {x, dy, w}, c.attrs, c.loc)};
}

// y = conv2d_transpose(d, w): dd = conv2d(g, w), dw = the filter gradient of conv2d(g) -> d.
std::vector<Tensor> grad_conv2d_backprop_input(const GradContext& c) {
  const Tensor &d = c.inputs[0], &w = c.inputs[1], &g = c.dys[0];
  std::vector<Tensor> r{apply_op(OpKind::Conv2D, {g, w}, c.attrs, c.loc),
                        apply_op(OpKind::Conv2DBackpropFilter, {g, d, w}, c.attrs, c.loc)};
  if (c.inputs.size() == 3) r.emplace_back();  // the shape source: none
  return r;
}

// dw = filter_gradient(x, d): dx = conv2d_transpose(d, g), dd = conv2d(x, g).
std::vector<Tensor> grad_conv2d_backprop_filter(const GradContext& c) {
  const Tensor &x = c.inputs[0], &d = c.inputs[1], &g = c.dys[0];
  return {apply_op(OpKind::Conv2DBackpropInput, {d, g, x}, c.attrs, c.loc), apply_op(OpKind::Conv2D, {x, g}, c.attrs, c.loc),
          Tensor()};
}

std::vector<Tensor> grad_max_pool(const GradContext& c) {
  return {apply_op(OpKind::MaxPoolGrad, {c.inputs[0], c.dys[0]}, c.attrs, c.loc)};
}

// dx = max_pool_grad(x, d) routes d to each window's maximum, linearly in d (x only picks the
// places: no gradient): dd = each window's g at its maximum (TensorFlow's MaxPoolGradGrad).
std::vector<Tensor> grad_max_pool_grad(const GradContext& c) {
  return {Tensor(), apply_op(OpKind::MaxPoolGradGrad, {c.inputs[0], c.dys[0]}, c.attrs, c.loc)};
}

// Its adjoint is max_pool_grad again.
std::vector<Tensor> grad_max_pool_grad_grad(const GradContext& c) {
  return {Tensor(), apply_op(OpKind::MaxPoolGrad, {c.inputs[0], c.dys[0]}, c.attrs, c.loc)};
}

std::vector<Tensor> grad_avg_pool(const GradContext& c) {
  return {apply_op(OpKind::AvgPoolGrad, {c.inputs[0], c.dys[0]}, c.attrs, c.loc)};
}

// dx = avg_pool_grad(x, d) is linear in d (x gives only its shape): dd = avg_pool(g).
std::vector<Tensor> grad_avg_pool_grad(const GradContext& c) {
  return {Tensor(), apply_op(OpKind::AvgPool, {c.dys[0]}, c.attrs, c.loc)};
}

}  // namespace ag::detail
