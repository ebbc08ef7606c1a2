// GradientTape's semantics, as tf.GradientTape's: watching, Variables, sources that get no
// gradient, persistence, higher order, stop_gradient, Functions called under a tape (run op by
// op, their loops and branches recorded as they run), and the errors for what is not supported.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include <cmath>

#include "test_util.h"

namespace {

using ag::Tensor;

double item(const Tensor& t) { return t.item<double>(); }

TEST(GradientTape, TheGuidesFirstExamples) {
  // x = tf.constant(3.0); with tape: tape.watch(x); y = x * x  ->  dy/dx = 6
  const Tensor x = ag::constant(3.0f);
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = x * x;
  EXPECT_FLOAT_EQ(item(tape.gradient(y, x)), 6.0f);
  // v = tf.Variable(1.0); with tape: result = v + 1.0  ->  1.0 (Variables are watched)
  ag::Variable v(1.0f);
  ag::GradientTape tape2;
  const Tensor result = v + 1.0f;
  const Tensor dv = tape2.gradient(result, v);
  EXPECT_EQ(dv.dtype(), ag::float32);
  EXPECT_FLOAT_EQ(item(dv), 1.0f);
}

TEST(GradientTape, ListsOfSourcesVariablesAndANonScalarTarget) {
  ag::Variable w(ag::constant({{1.0, 2.0}, {3.0, 4.0}}), "w");
  const Tensor x = ag::constant({{1.0, -1.0}});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::matmul(x, w) * 2.0;  // [1, 2], summed by gradient()
  const std::vector<Tensor> g = tape.gradient(y, {x, w});
  ASSERT_EQ(g.size(), 2u);
  // A braced list of one is a list too (TensorFlow's tape.gradient(y, [x])).
  ag::GradientTape again;
  again.watch(x);
  const std::vector<Tensor> one = again.gradient(ag::matmul(x, w) * 2.0, {w});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(agtest::doubles(one[0]), (std::vector<double>{2, 2, -2, -2}));
  EXPECT_EQ(agtest::doubles(g[0]), (std::vector<double>{6, 14}));       // 2 * row sums of w
  EXPECT_EQ(agtest::doubles(g[1]), (std::vector<double>{2, 2, -2, -2}));  // 2 * x^T 1
}

TEST(GradientTape, OutputGradientsWeightTheTarget) {
  const Tensor x = ag::constant({1.0, 2.0, 3.0});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = x * x;
  const std::vector<Tensor> g = tape.gradient(y, {x}, ag::constant({1.0, 0.0, -1.0}));
  EXPECT_EQ(agtest::doubles(g[0]), (std::vector<double>{2, 0, -6}));
}

TEST(GradientTape, SourcesThatGetNoGradient) {
  const Tensor x = ag::constant(2.0f), unused = ag::constant({1.0f, 2.0f}), n = ag::constant(3);
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  tape.watch(unused);
  tape.watch(n);
  const Tensor y = x * ag::cast(n, ag::float32);
  EXPECT_FALSE(tape.gradient(y, unused).has_value());  // TF's None
  const Tensor zero = tape.gradient(y, unused, ag::UnconnectedGradients::zero);
  EXPECT_EQ(agtest::doubles(zero), (std::vector<double>{0, 0}));
  EXPECT_FALSE(tape.gradient(y, n).has_value());  // an integer source: none
  const Tensor not_watched = ag::constant(1.0f);
  EXPECT_FALSE(tape.gradient(y, not_watched).has_value());
  // Through a comparison or an integer cast nothing flows.
  EXPECT_FALSE(tape.gradient(ag::cast(ag::cast(x, ag::int32), ag::float32), x).has_value());
}

TEST(GradientTape, ANonPersistentTapeComputesOneGradient) {
  const Tensor x = ag::constant(2.0);
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = x * x, z = y * x;
  EXPECT_DOUBLE_EQ(item(tape.gradient(y, x)), 4.0);
  AG_EXPECT_ERROR(ag::ValueError, tape.gradient(z, x), "persistent");
  ag::GradientTape persistent(true);
  persistent.watch(x);
  const Tensor y2 = x * x, z2 = y2 * x;
  EXPECT_DOUBLE_EQ(item(persistent.gradient(y2, x)), 4.0);
  EXPECT_DOUBLE_EQ(item(persistent.gradient(z2, x)), 12.0);
}

TEST(GradientTape, NestedTapesGiveHigherOrderGradients) {
  const Tensor x = ag::constant(1.5);
  ag::GradientTape outer;
  outer.watch(x);
  Tensor dy;
  {
    ag::GradientTape inner;
    inner.watch(x);
    const Tensor y = x * x * x;
    dy = inner.gradient(y, x);  // 3x^2, recorded by the outer tape
  }
  EXPECT_DOUBLE_EQ(item(dy), 3 * 1.5 * 1.5);
  EXPECT_DOUBLE_EQ(item(outer.gradient(dy, x)), 6 * 1.5);
  // Second order through matmul and tanh: d/da sum(g(a)^2), g = d/da sum(tanh(a a)), against
  // central differences of the first-order gradient.
  auto first_order = [](const Tensor& m) {
    ag::GradientTape t;
    t.watch(m);
    return t.gradient(ag::reduce_sum(ag::tanh(ag::matmul(m, m))), m);
  };
  const Tensor a = ag::constant({{0.5, -1.0}, {2.0, 0.25}});
  ag::GradientTape o2;
  o2.watch(a);
  const Tensor g = first_order(a);
  const Tensor h = o2.gradient(ag::reduce_sum(g * g), a);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h.shape(), a.shape());
  const std::vector<double> got = agtest::doubles(h), base = agtest::doubles(a);
  for (size_t e = 0; e < base.size(); ++e) {
    constexpr double eps = 1e-6;
    std::vector<double> p = base, m = base;
    p[e] += eps;
    m[e] -= eps;
    const Tensor gp = first_order(ag::constant(p, {2, 2})), gm = first_order(ag::constant(m, {2, 2}));
    const double fd = (ag::reduce_sum(gp * gp).item<double>() - ag::reduce_sum(gm * gm).item<double>()) / (2 * eps);
    EXPECT_NEAR(got[e], fd, 1e-6 * std::max(1.0, std::abs(fd))) << e;
  }
}

TEST(GradientTape, StopGradientBlocksTheFlow) {
  const Tensor x = ag::constant(3.0);
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = x * ag::stop_gradient(x);  // d/dx = stop_gradient(x) = 3
  EXPECT_DOUBLE_EQ(item(tape.gradient(y, x)), 3.0);
}

// The seed's example: a Function called under a tape.
TEST(GradientTape, AFunctionCalledUnderATape) {
  auto add = ag::function([](Tensor a, Tensor b) { return a + b; }, agtest::interpreted());
  ag::Variable v(1.0f);
  ag::GradientTape tape;
  const Tensor result = add(v, ag::constant(1.0f));
  EXPECT_FLOAT_EQ(item(tape.gradient(result, v)), 1.0f);
}

// A Variable read inside the Function, and a data-dependent staged loop: the tape records the
// iterations that ran. y = w^n for n = 3.
TEST(GradientTape, AFunctionsVariablesAndLoopsUnderATape) {
  ag::Variable w(1.5, "w");
  auto power = ag::function(
      [&](Tensor n) {
        Tensor y = ag::constant(1.0);
        Tensor i = 0;
        ag::while_stmt([&] { return i < n; },
                       [&] {
                         y = y * w;
                         i += 1;
                       },
                       ag::state(y, i), {"y", "i"}, AG_SOURCE_LOC("power.cpp", 1));
        return y;
      },
      agtest::interpreted());
  ag::GradientTape tape;
  const Tensor y = power(Tensor(3));
  EXPECT_DOUBLE_EQ(item(y), 1.5 * 1.5 * 1.5);
  EXPECT_DOUBLE_EQ(item(tape.gradient(y, w)), 3 * 1.5 * 1.5);
}

TEST(GradientTape, ThroughTensorArrayWritesReadsAndStacks) {
  const Tensor x = ag::constant({1.5, -2.0});
  ag::GradientTape tape;
  tape.watch(x);
  ag::TensorArray ta(ag::float64);
  ta.write(0, x * 3.0);
  ta.write(1, ag::square(x));
  ta.write(2, x);
  ta.write(2, x * 10.0);  // overwritten: the first x * 1 gets no gradient
  const Tensor first = ta.read(0);
  ta.write(4, ag::sin(x));  // grows; row 3 stays zeros
  const Tensor y = ag::reduce_sum(first * first) + ag::reduce_sum(ta.stack() * ag::constant(std::vector<double>{1, 2, 3, 4, 5}, {5, 1}));
  // d/dx: 2*(3x)*3 + 1*3 + 2*2x + 3*10 + 5*cos(x)
  const std::vector<double> got = agtest::doubles(tape.gradient(y, x));
  const std::vector<double> xv = agtest::doubles(x);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(got[i], 18 * xv[i] + 3 + 4 * xv[i] + 30 + 5 * std::cos(xv[i]), 1e-12) << i;
}

}  // namespace
