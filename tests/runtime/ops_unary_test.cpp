// Unary elementwise functions against <cmath>, for every dtype each accepts, and their dtype errors.
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"

namespace {

using agtest::expect_values;
using agtest::make;

template <class T>
class UnaryNumeric : public ::testing::Test {};
TYPED_TEST_SUITE(UnaryNumeric, agtest::NumericTypes);

template <class T, class F>
std::vector<T> map(const std::vector<T>& v, F&& f) {
  std::vector<T> out;
  for (T x : v) out.push_back(static_cast<T>(f(x)));
  return out;
}

TYPED_TEST(UnaryNumeric, AbsSquareReluSignNeg) {
  using T = TypeParam;
  auto v = agtest::sample<T>(30, 31);
  v.push_back(T(0));
  const ag::Tensor x = make(v, {31});
  expect_values(ag::abs(x), map(v, [](T a) { return a < 0 ? -a : a; }));
  expect_values(ag::square(x), map(v, [](T a) { return a * a; }));
  expect_values(ag::relu(x), map(v, [](T a) { return a > 0 ? a : T(0); }));
  expect_values(ag::sign(x), map(v, [](T a) { return a > 0 ? T(1) : a < 0 ? T(-1) : T(0); }));
  expect_values(ag::neg(x), map(v, [](T a) { return -a; }));
  expect_values(ag::identity(x), v);
  EXPECT_EQ(ag::abs(x).dtype(), ag::dtype_of<T>());
}

template <class T>
class UnaryFloat : public ::testing::Test {};
TYPED_TEST_SUITE(UnaryFloat, agtest::FloatTypes);

TYPED_TEST(UnaryFloat, TranscendentalsMatchCmath) {
  using T = TypeParam;
  // Relative tolerance: Eigen's vectorized exp/log/tanh/sin are within a few ULP.
  const double rel = std::is_same_v<T, float> ? 4e-6 : 1e-13;
  std::vector<T> v;
  for (int i = -40; i <= 40; ++i) v.push_back(static_cast<T>(i) * T(0.37));
  std::vector<T> pos;
  for (T a : v) pos.push_back(std::abs(a) + T(0.01));
  const ag::Tensor x = make(v, {81});
  const ag::Tensor p = make(pos, {81});
  expect_values(ag::exp(x), map(v, [](T a) { return std::exp(a); }), rel);
  expect_values(ag::log(p), map(pos, [](T a) { return std::log(a); }), rel, rel);
  expect_values(ag::sqrt(p), map(pos, [](T a) { return std::sqrt(a); }), rel);
  expect_values(ag::tanh(x), map(v, [](T a) { return std::tanh(a); }), rel, rel);
  expect_values(ag::sigmoid(x), map(v, [](T a) { return T(1) / (T(1) + std::exp(-a)); }), rel, rel);
  expect_values(ag::sin(x), map(v, [](T a) { return std::sin(a); }), rel, rel);
  expect_values(ag::cos(x), map(v, [](T a) { return std::cos(a); }), rel, rel);
  expect_values(ag::floor(x), map(v, [](T a) { return std::floor(a); }));
  expect_values(ag::ceil(x), map(v, [](T a) { return std::ceil(a); }));
}

TYPED_TEST(UnaryFloat, RoundIsHalfToEven) {
  using T = TypeParam;
  const ag::Tensor x = make<T>({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6}, {9});
  expect_values(ag::round(x), std::vector<T>{0, 2, 2, -0, -2, -2, 2, 3, -3});
}

// The transcendentals' special values: ops_special_values_test.cpp.
TYPED_TEST(UnaryFloat, SpecialValues) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const ag::Tensor x = make<T>({nan, inf, -inf, 0}, {4});
  expect_values(ag::abs(x), std::vector<T>{nan, inf, inf, 0});
  expect_values(ag::relu(x), std::vector<T>{nan, inf, 0, 0});
}

TEST(Unary, IntegerEdgeCasesWrap) {
  const ag::Tensor x = ag::constant({INT32_MIN, INT32_MAX, -1});
  EXPECT_EQ(ag::abs(x).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, INT32_MAX, 1}));
  EXPECT_EQ(ag::neg(x).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, -INT32_MAX, 1}));
  EXPECT_EQ(ag::square(ag::constant({65536, -3})).to_vector<int32_t>(), (std::vector<int32_t>{0, 9}));
}

TEST(Unary, FloatOnlyFunctionsRejectIntegersNamingTheOp) {
  const ag::Tensor i = ag::constant({1, 2});
  const std::pair<const char*, std::function<ag::Tensor(const ag::Tensor&)>> fns[] = {
      {"ag::exp", [](const ag::Tensor& t) { return ag::exp(t); }},
      {"ag::log", [](const ag::Tensor& t) { return ag::log(t); }},
      {"ag::sqrt", [](const ag::Tensor& t) { return ag::sqrt(t); }},
      {"ag::tanh", [](const ag::Tensor& t) { return ag::tanh(t); }},
      {"ag::sigmoid", [](const ag::Tensor& t) { return ag::sigmoid(t); }},
      {"ag::sin", [](const ag::Tensor& t) { return ag::sin(t); }},
      {"ag::cos", [](const ag::Tensor& t) { return ag::cos(t); }},
      {"ag::floor", [](const ag::Tensor& t) { return ag::floor(t); }},
      {"ag::ceil", [](const ag::Tensor& t) { return ag::ceil(t); }},
      {"ag::round", [](const ag::Tensor& t) { return ag::round(t); }},
  };
  for (const auto& [name, fn] : fns) {
    AG_EXPECT_ERROR(ag::TypeError, fn(i), name, "int32", "ag::cast");
    AG_EXPECT_ERROR(ag::TypeError, fn(ag::constant({int64_t{1}})), name, "int64");
    AG_EXPECT_ERROR(ag::TypeError, fn(ag::constant({true})), name, "bool");
  }
}

TEST(Unary, NumericFunctionsRejectBool) {
  const ag::Tensor b = ag::constant({true, false});
  AG_EXPECT_ERROR(ag::TypeError, ag::abs(b), "ag::abs", "bool");
  AG_EXPECT_ERROR(ag::TypeError, ag::square(b), "ag::square", "bool");
  AG_EXPECT_ERROR(ag::TypeError, ag::relu(b), "ag::relu", "bool");
  AG_EXPECT_ERROR(ag::TypeError, ag::sign(b), "ag::sign", "bool");
  EXPECT_EQ(ag::identity(b).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(Unary, LogicalNotAndTilde) {
  const ag::Tensor b = ag::constant({true, false, true});
  EXPECT_EQ((~b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(ag::logical_not(b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  AG_EXPECT_ERROR(ag::TypeError, ~ag::constant({1}), "ag::logical_not", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::logical_not(ag::constant({1.f})), "ag::logical_not", "float32");
}

}  // namespace
