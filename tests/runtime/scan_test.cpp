// cumsum and cumprod eagerly: every axis, exclusive and reverse, against plain loops; integer
// wrap-around; their gradients against finite differences; the errors.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include <vector>

namespace {

using ag::Tensor;

// The reference: along axis `axis` of a row-major [2, 3, 4] array.
std::vector<double> scan_ref(const std::vector<double>& x, int axis, bool exclusive, bool reverse, bool product) {
  const int dims[3] = {2, 3, 4};
  const int stride[3] = {12, 4, 1};
  std::vector<double> y(x.size());
  for (int i = 0; i < 24; ++i) {
    int idx[3] = {i / 12, (i / 4) % 3, i % 4};
    if (idx[axis] != 0) continue;  // walk each line once, from its first element
    double acc = product ? 1 : 0;
    for (int k = 0; k < dims[axis]; ++k) {
      const int row = reverse ? dims[axis] - 1 - k : k;
      const int at = i + row * stride[axis];
      const double next = product ? acc * x[static_cast<size_t>(at)] : acc + x[static_cast<size_t>(at)];
      y[static_cast<size_t>(at)] = exclusive ? acc : next;
      acc = next;
    }
  }
  return y;
}

TEST(Scan, EveryAxisAndFlag) {
  std::vector<double> xs(24);
  for (int i = 0; i < 24; ++i) xs[static_cast<size_t>(i)] = 0.5 + 0.1 * ((i * 7) % 11);
  const Tensor x = ag::constant(xs, {2, 3, 4});
  for (int axis = 0; axis < 3; ++axis)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(testing::Message() << "axis " << axis << " exclusive " << exclusive << " reverse " << reverse);
        const std::vector<double> s = ag::cumsum(x, axis, exclusive, reverse).to_vector<double>();
        const std::vector<double> p = ag::cumprod(x, axis - 3, exclusive, reverse).to_vector<double>();  // negative axis
        const std::vector<double> ws = scan_ref(xs, axis, exclusive, reverse, false), wp = scan_ref(xs, axis, exclusive, reverse, true);
        for (size_t k = 0; k < 24; ++k) {
          EXPECT_NEAR(s[k], ws[k], 1e-12) << k;
          EXPECT_NEAR(p[k], wp[k], 1e-12) << k;
        }
      }
}

TEST(Scan, IntegersWrapAndKeepTheirDtype) {
  const Tensor x = ag::constant(std::vector<int32_t>{INT32_MAX, 1, 2});
  const Tensor s = ag::cumsum(x);
  EXPECT_EQ(s.dtype(), ag::int32);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{INT32_MAX, INT32_MIN, INT32_MIN + 2}));
  EXPECT_EQ(ag::cumprod(ag::constant(std::vector<int64_t>{2, 3, 4}), 0, true).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(ag::cumsum(ag::zeros({0, 3})).shape(), (ag::Shape{0, 3}));
}

TEST(Scan, Gradients) {
  const Tensor x = ag::constant(std::vector<double>{0.5, -1.5, 2.0, 0.8, 1.2, -0.7}, {2, 3});
  const Tensor w = ag::constant(std::vector<double>{1, 2, 3, -1, 0.5, 4}, {2, 3});
  for (bool product : {false, true})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(testing::Message() << "product " << product << " exclusive " << exclusive << " reverse " << reverse);
        auto f = [&](const Tensor& t) {
          return ag::reduce_sum((product ? ag::cumprod(t, 1, exclusive, reverse) : ag::cumsum(t, 1, exclusive, reverse)) * w);
        };
        ag::GradientTape tape;
        tape.watch(x);
        const Tensor g = tape.gradient(f(x), x);
        const std::vector<double> got = g.to_vector<double>();
        std::vector<double> base = x.to_vector<double>();
        for (size_t k = 0; k < base.size(); ++k) {
          std::vector<double> p = base, m = base;
          p[k] += 1e-6;
          m[k] -= 1e-6;
          const double numeric =
              (f(ag::constant(p, {2, 3})).item<double>() - f(ag::constant(m, {2, 3})).item<double>()) / 2e-6;
          EXPECT_NEAR(got[k], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << k;
        }
      }
}

TEST(Scan, Errors) {
  EXPECT_THROW(ag::cumsum(ag::constant(std::vector<bool>{true, false})), ag::TypeError);
  EXPECT_THROW(ag::cumsum(ag::constant(1.0f)), ag::ValueError);
  EXPECT_THROW(ag::cumsum(ag::zeros({2, 2}), 2), ag::ValueError);
}

}  // namespace
