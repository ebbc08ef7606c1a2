// Central finite differences in float64, as tf.test.compute_gradient, aware of kinks (relu, abs,
// a max at a tie: the sampled inputs include exact zeros): there a gradient may be either
// one-sided derivative or between them, as TensorFlow's are.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include <fmt/format.h>

namespace agtest {

// Empty when `got` is the derivative of f at 0, where f(delta) is the function with one input
// element moved by delta; else what differs. `f_is_a_gradient`: f is itself a first-order
// gradient (second order), which may jump at a kink of the function (abs' sign(0) = 0 between
// -1 and 1): there the finite differences mean nothing and the element is not checked.
inline std::string differs_from_finite_difference(double got, const std::function<double(double)>& f,
                                                  bool f_is_a_gradient = false, double eps = 1e-6) {
  const double at = f(0), up = f(eps), down = f(-eps);
  const double fd = (up - down) / (2 * eps), right = (up - at) / eps, left = (at - down) / eps;
  const double tol = 1e-4 * std::max(1.0, std::abs(fd));
  if (std::abs(right - left) <= 10 * tol) {
    if (std::abs(got - fd) <= tol) return {};
    return fmt::format("{} vs finite difference {}", got, fd);
  }
  if (f_is_a_gradient) return {};  if (got >= std::min(left, right) - tol && got <= std::max(left, right) + tol) return {};
  return fmt::format("{} at a kink, outside [{}, {}] (left {}, right {})", got, std::min(left, right), std::max(left, right),
                     left, right);
}

}  // namespace agtest
