// Gradient rules of the elementwise ops: unary, binary (summed back over broadcast dims), cast,
// select, fill. Ties follow TensorFlow: maximum/minimum give the gradient to their first operand
// where the operands are equal, relu gives 0 at 0, abs gives 0 at 0 (sign).
#include "rules.h"

#include "ag/construct.h"
#include "ag/operators/functional.h"

namespace ag::detail {
namespace {

const Tensor& x0(const GradContext& c) { return c.inputs[0]; }
const Tensor& y0(const GradContext& c) { return c.outputs[0]; }
const Tensor& dy(const GradContext& c) { return c.dys[0]; }

// The gradients of a binary op from the gradient of each operand at the broadcast shape.
std::vector<Tensor> binary(const GradContext& c, const Tensor& da, const Tensor& db) {
  return {unbroadcast(da, c.inputs[0], c.loc), unbroadcast(db, c.inputs[1], c.loc)};
}

}  // namespace

Tensor unbroadcast(const Tensor& g, const Tensor& x, SourceLoc loc) {
  const Shape& gs = g.shape();
  const Shape& xs = x.shape();
  const int64_t lead = gs.rank() - xs.rank();
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < lead; ++d) axes.push_back(d);
  // A dim of x that is 1 where the result's is not (or is unknown) was broadcast.
  for (int64_t j = 0; j < xs.rank(); ++j)
    if (xs[j] == 1 && gs[lead + j] != 1) axes.push_back(lead + j);
  Tensor r = axes.empty() ? g : reduce_sum(g, axes, /*keepdims=*/true);
  // A dim of x unknown while tracing may turn out 1 at run time: then it was broadcast too, and
  // the sum over it is taken in a staged if (TensorFlow's BroadcastGradientArgs, at run time).
  for (int64_t j = 0; j < xs.rank(); ++j) {
    if (xs[j] >= 0 || gs[lead + j] == 1) continue;
    const Tensor x_dim = gather(shape_of(x), Tensor(j)), g_dim = gather(shape_of(r), Tensor(lead + j));
    const Tensor summed = logical_and(x_dim == 1, g_dim != 1);
    r = cond(summed, [&] { return reduce_sum(r, lead + j, /*keepdims=*/true); }, [&] { return r; }, loc);
  }
  if (lead == 0) return r;
  std::vector<int64_t> leading(static_cast<size_t>(lead));
  for (int64_t d = 0; d < lead; ++d) leading[static_cast<size_t>(d)] = d;
  return squeeze(r, leading);
}

std::vector<Tensor> grad_identity(const GradContext& c) { return {dy(c)}; }
std::vector<Tensor> grad_neg(const GradContext& c) { return {-dy(c)}; }
std::vector<Tensor> grad_abs(const GradContext& c) { return {dy(c) * sign(x0(c))}; }
std::vector<Tensor> grad_square(const GradContext& c) { return {dy(c) * (x0(c) * 2)}; }
std::vector<Tensor> grad_relu(const GradContext& c) { return {where(x0(c) > 0, dy(c), 0)}; }
std::vector<Tensor> grad_exp(const GradContext& c) { return {dy(c) * y0(c)}; }
std::vector<Tensor> grad_log(const GradContext& c) { return {dy(c) / x0(c)}; }
std::vector<Tensor> grad_sqrt(const GradContext& c) { return {dy(c) * 0.5 / y0(c)}; }
std::vector<Tensor> grad_tanh(const GradContext& c) { return {dy(c) * (1 - y0(c) * y0(c))}; }
std::vector<Tensor> grad_sigmoid(const GradContext& c) { return {dy(c) * (y0(c) * (1 - y0(c)))}; }
std::vector<Tensor> grad_softplus(const GradContext& c) { return {dy(c) * sigmoid(x0(c))}; }
std::vector<Tensor> grad_sin(const GradContext& c) { return {dy(c) * cos(x0(c))}; }
std::vector<Tensor> grad_cos(const GradContext& c) { return {-(dy(c) * sin(x0(c)))}; }
// d erf(x) / dx = 2 / sqrt(pi) * exp(-x^2)
std::vector<Tensor> grad_erf(const GradContext& c) {
  const Tensor x = x0(c);
  return {dy(c) * (exp(-(x * x)) * 1.1283791670955126)};
}

// d erfc(x) / dx = -2 / sqrt(pi) * exp(-x^2)
std::vector<Tensor> grad_erfc(const GradContext& c) {
  const Tensor x = x0(c);
  return {dy(c) * (exp(-(x * x)) * -1.1283791670955126)};
}
std::vector<Tensor> grad_log1p(const GradContext& c) { return {dy(c) / (x0(c) + 1)}; }
std::vector<Tensor> grad_expm1(const GradContext& c) { return {dy(c) * (y0(c) + 1)}; }
std::vector<Tensor> grad_rsqrt(const GradContext& c) {  // -x^(-3/2) / 2 = -y^3 / 2
  const Tensor y = y0(c);
  return {dy(c) * (y * y * y * -0.5)};
}
std::vector<Tensor> grad_tan(const GradContext& c) { return {dy(c) * (y0(c) * y0(c) + 1)}; }
std::vector<Tensor> grad_atan(const GradContext& c) { return {dy(c) / (square(x0(c)) + 1)}; }
std::vector<Tensor> grad_asin(const GradContext& c) { return {dy(c) * rsqrt(1 - square(x0(c)))}; }
std::vector<Tensor> grad_acos(const GradContext& c) { return {-(dy(c) * rsqrt(1 - square(x0(c))))}; }
std::vector<Tensor> grad_sinh(const GradContext& c) { return {dy(c) * cosh(x0(c))}; }
std::vector<Tensor> grad_cosh(const GradContext& c) { return {dy(c) * sinh(x0(c))}; }
std::vector<Tensor> grad_asinh(const GradContext& c) { return {dy(c) * rsqrt(square(x0(c)) + 1)}; }
std::vector<Tensor> grad_acosh(const GradContext& c) { return {dy(c) * rsqrt(square(x0(c)) - 1)}; }
std::vector<Tensor> grad_atanh(const GradContext& c) { return {dy(c) / (1 - square(x0(c)))}; }

std::vector<Tensor> grad_cast(const GradContext& c) {
  if (!is_floating(x0(c).dtype())) return {Tensor()};  // from an integer or bool: none
  return {cast(dy(c), x0(c).dtype())};
}

std::vector<Tensor> grad_add(const GradContext& c) { return binary(c, dy(c), dy(c)); }
std::vector<Tensor> grad_sub(const GradContext& c) { return binary(c, dy(c), -dy(c)); }
std::vector<Tensor> grad_mul(const GradContext& c) { return binary(c, dy(c) * c.inputs[1], dy(c) * c.inputs[0]); }
// atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
std::vector<Tensor> grad_atan2(const GradContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const Tensor scale = dy(c) / (a * a + b * b);
  return binary(c, scale * b, -(scale * a));
}
std::vector<Tensor> grad_div(const GradContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  return binary(c, dy(c) / b, -(dy(c) * a) / (b * b));
}
// floormod(a, b) = a - floor(a / b) b: 1 for a and -floor(a / b) for b (TensorFlow's FloorMod
// gradient; the steps where floor(a / b) jumps have no gradient).
std::vector<Tensor> grad_floormod(const GradContext& c) {
  return binary(c, dy(c), -(dy(c) * floordiv(c.inputs[0], c.inputs[1])));
}
std::vector<Tensor> grad_pow(const GradContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  // d/db a^b = a^b log a, taken as 0 where a <= 0 (TensorFlow's choice: finite, not NaN).
  const Tensor log_a = where(a > 0, log(where(a > 0, a, 1)), 0);
  return binary(c, dy(c) * b * pow(a, b - 1), dy(c) * y0(c) * log_a);
}
std::vector<Tensor> grad_maximum(const GradContext& c) {
  const Tensor first = c.inputs[0] >= c.inputs[1];
  return binary(c, where(first, dy(c), 0), where(first, 0, dy(c)));
}
std::vector<Tensor> grad_minimum(const GradContext& c) {
  const Tensor first = c.inputs[0] <= c.inputs[1];
  return binary(c, where(first, dy(c), 0), where(first, 0, dy(c)));
}

std::vector<Tensor> grad_select(const GradContext& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor zero = zeros_like(dy(c));
  return {Tensor(), unbroadcast(where(cond, dy(c), zero), c.inputs[1], c.loc),
          unbroadcast(where(cond, zero, dy(c)), c.inputs[2], c.loc)};
}

// Fill's input is the scalar value every element took.
std::vector<Tensor> grad_fill(const GradContext& c) { return {reduce_sum(dy(c))}; }

}  // namespace ag::detail
