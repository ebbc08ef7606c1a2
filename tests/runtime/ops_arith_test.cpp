// Binary arithmetic (+ - * / % pow maximum minimum floordiv floormod) for every numeric dtype,
// against reference loops, with broadcasting; compound assignment.
#include <cmath>

#include "test_util.h"

namespace {

using agtest::expect_values;
using agtest::make;
using agtest::ref_binary;
using agtest::sample;

template <class T>
class Arith : public ::testing::Test {};
TYPED_TEST_SUITE(Arith, agtest::NumericTypes);

// Shapes that exercise broadcasting in both directions and a leading dim.
const std::vector<int64_t> kA = {2, 3, 4};
const std::vector<int64_t> kB = {3, 1};

TYPED_TEST(Arith, AddSubMul) {
  using T = TypeParam;
  const auto a = sample<T>(24, 1), b = sample<T>(3, 2);
  const ag::Tensor x = make(a, kA), y = make(b, kB);
  std::vector<int64_t> shape;
  const auto sum = ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p + q); }, &shape);
  const ag::Tensor s = x + y;
  EXPECT_EQ(agtest::dims(s), shape);
  expect_values(s, sum);
  expect_values(ag::add(x, y), sum);
  expect_values(x - y, ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p - q); }));
  expect_values(y - x, ref_binary<T>(b, kB, a, kA, [](T p, T q) { return static_cast<T>(p - q); }));
  expect_values(ag::subtract(x, y), ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p - q); }));
  expect_values(x * y, ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p * q); }));
  expect_values(ag::multiply(y, x), ref_binary<T>(b, kB, a, kA, [](T p, T q) { return static_cast<T>(p * q); }));
}

TYPED_TEST(Arith, DivideAndModulo) {
  using T = TypeParam;
  const auto a = sample<T>(24, 3), b = sample<T>(3, 4, /*nonzero=*/true);
  const ag::Tensor x = make(a, kA), y = make(b, kB);
  // C++ semantics: integers truncate; floating-point % is fmod.
  expect_values(x / y, ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p / q); }));
  expect_values(ag::divide(x, y), ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p / q); }));
  if constexpr (std::is_integral_v<T>) {
    expect_values(x % y, ref_binary<T>(a, kA, b, kB, [](T p, T q) { return static_cast<T>(p % q); }));
  } else {
    expect_values(x % y, ref_binary<T>(a, kA, b, kB, [](T p, T q) { return std::fmod(p, q); }));
  }
}

TYPED_TEST(Arith, FloorDivAndFloorMod) {
  using T = TypeParam;
  const auto a = sample<T>(24, 5), b = sample<T>(3, 6, true, 7);
  const ag::Tensor x = make(a, kA), y = make(b, kB);
  // Reference through long double: exact for these small values.
  auto fdiv = [](T p, T q) {
    return static_cast<T>(std::floor(static_cast<long double>(p) / static_cast<long double>(q)));
  };
  auto fmod_ = [&](T p, T q) { return static_cast<T>(p - fdiv(p, q) * q); };
  expect_values(ag::floordiv(x, y), ref_binary<T>(a, kA, b, kB, fdiv));
  expect_values(ag::floormod(x, y), ref_binary<T>(a, kA, b, kB, fmod_), 1e-6, 1e-6);
  // The result of floormod has the divisor's sign (or is 0).
  const auto m = ag::floormod(x, y).template to_vector<double>();
  const auto divisors = ref_binary<T>(a, kA, b, kB, [](T, T q) { return q; });
  for (size_t i = 0; i < m.size(); ++i)
    EXPECT_TRUE(m[i] == 0 || (m[i] < 0) == (divisors[i] < 0)) << i << ": " << m[i] << " vs divisor " << +divisors[i];
}

TYPED_TEST(Arith, MaximumMinimum) {
  using T = TypeParam;
  const auto a = sample<T>(24, 7), b = sample<T>(3, 8);
  const ag::Tensor x = make(a, kA), y = make(b, kB);
  expect_values(ag::maximum(x, y), ref_binary<T>(a, kA, b, kB, [](T p, T q) { return std::max(p, q); }));
  expect_values(ag::minimum(x, y), ref_binary<T>(a, kA, b, kB, [](T p, T q) { return std::min(p, q); }));
  expect_values(ag::maximum(y, x), ref_binary<T>(b, kB, a, kA, [](T p, T q) { return std::max(p, q); }));
}

TYPED_TEST(Arith, Pow) {
  using T = TypeParam;
  const std::vector<T> base = {2, 3, -2, 0, 1, -1};
  const std::vector<T> ex = {0, 1, 3, 5, 7, 2};
  const ag::Tensor p = ag::pow(make(base, {6}), make(ex, {6}));
  expect_values(p, std::vector<T>{1, 3, -8, 0, 1, 1});
  if constexpr (std::is_floating_point_v<T>) {
    const std::vector<T> fb = {T(2.5), T(4), T(0.5)};
    const std::vector<T> fe = {T(0.5), T(-1), T(-2)};
    expect_values(ag::pow(make(fb, {3}), make(fe, {3})),
                  std::vector<T>{std::pow(T(2.5), T(0.5)), T(0.25), T(4)});
  } else {
    // Integer powers wrap like the other integer ops; negative exponents are an error.
    expect_values(ag::pow(make(std::vector<T>{3}, {1}), T(sizeof(T) * 8 + 1)),
                  std::vector<T>{[] {
                    std::make_unsigned_t<T> r = 1;
                    for (size_t i = 0; i < sizeof(T) * 8 + 1; ++i) r *= 3;
                    return static_cast<T>(r);
                  }()});
    AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::pow(make(std::vector<T>{2}, {1}), T(-1)), "ag::pow", "negative");
  }
}

TYPED_TEST(Arith, ScalarOnTheLeft) {
  using T = TypeParam;
  const auto a = sample<T>(6, 9, true);
  const ag::Tensor x = make(a, {2, 3});
  std::vector<T> e1, e2, e3;
  for (T v : a) {
    e1.push_back(static_cast<T>(10 - v));
    e2.push_back(static_cast<T>(12 / v));
    e3.push_back(static_cast<T>(3 * v + 1));
  }
  expect_values(10 - x, e1);
  expect_values(12 / x, e2);
  expect_values(3 * x + 1, e3);
}

TYPED_TEST(Arith, CompoundAssignment) {
  using T = TypeParam;
  const auto a = sample<T>(6, 10), b = sample<T>(3, 11, true);
  ag::Tensor x = make(a, {2, 3});
  const ag::Tensor y = make(b, {3});
  x += y;
  x -= 2;
  x *= y;
  std::vector<T> expected(a.size());
  for (size_t i = 0; i < a.size(); ++i) expected[i] = static_cast<T>((a[i] + b[i % 3] - 2) * b[i % 3]);
  expect_values(x, expected);
  x /= y;
  for (size_t i = 0; i < a.size(); ++i) expected[i] = static_cast<T>(expected[i] / b[i % 3]);
  expect_values(x, expected);
  if constexpr (std::is_integral_v<T>) {
    x %= 4;
    for (auto& v : expected) v = static_cast<T>(v % 4);
    expect_values(x, expected);
  }
  EXPECT_EQ(x.dtype(), ag::dtype_of<T>());
}

TYPED_TEST(Arith, UnaryMinus) {
  using T = TypeParam;
  const auto a = sample<T>(5, 12);
  std::vector<T> e;
  for (T v : a) e.push_back(static_cast<T>(-v));
  expect_values(-make(a, {5}), e);
  expect_values(ag::neg(make(a, {5})), e);
}

TEST(Arith, BoolTensorsHaveNoArithmetic) {
  const ag::Tensor t = ag::constant({true, false});
  AG_EXPECT_ERROR(ag::TypeError, t + t, "operator+", "bool");
  AG_EXPECT_ERROR(ag::TypeError, t * t, "operator*", "bool");
  AG_EXPECT_ERROR(ag::TypeError, ag::maximum(t, t), "ag::maximum", "bool");
  AG_EXPECT_ERROR(ag::TypeError, -t, "neg", "bool");
}

TEST(Arith, FloatDivisionByZeroIsIeee) {
  const ag::Tensor x = ag::constant({1.f, -1.f, 0.f});
  const auto r = (x / 0.f).to_vector<float>();
  EXPECT_EQ(r[0], INFINITY);
  EXPECT_EQ(r[1], -INFINITY);
  EXPECT_TRUE(std::isnan(r[2]));
}

TEST(Arith, NaNPropagatesThroughMaximumAndMinimum) {
  const ag::Tensor x = ag::constant({NAN, 1.f, 2.f, NAN});
  const ag::Tensor y = ag::constant({1.f, NAN, 0.f, NAN});
  for (const auto& r : {ag::maximum(x, y), ag::maximum(y, x), ag::minimum(x, y), ag::minimum(y, x)}) {
    const auto v = r.to_vector<float>();
    EXPECT_TRUE(std::isnan(v[0]));
    EXPECT_TRUE(std::isnan(v[1]));
    EXPECT_FALSE(std::isnan(v[2]));
    EXPECT_TRUE(std::isnan(v[3]));
  }
  EXPECT_EQ(ag::maximum(x, y).to_vector<float>()[2], 2.f);
  EXPECT_EQ(ag::minimum(x, y).to_vector<float>()[2], 0.f);
  // Against a scalar, and with NaN as the broadcast operand.
  EXPECT_TRUE(std::isnan(ag::maximum(ag::constant({NAN, 3.f}), 1.f).to_vector<float>()[0]));
  const auto b = ag::maximum(ag::constant({1.f, 5.f}), ag::constant(std::vector<float>{NAN}, ag::Shape{1}));
  EXPECT_TRUE(std::isnan(b.to_vector<float>()[0]) && std::isnan(b.to_vector<float>()[1]));
}

TEST(Arith, IntegerOverflowWraps) {
  const ag::Tensor big = ag::constant({INT32_MAX, INT32_MIN});
  EXPECT_EQ((big + 1).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, INT32_MIN + 1}));
  EXPECT_EQ((big * 2).to_vector<int32_t>(), (std::vector<int32_t>{-2, 0}));
  EXPECT_EQ((-big).to_vector<int32_t>(), (std::vector<int32_t>{-INT32_MAX, INT32_MIN}));
}

}  // namespace
