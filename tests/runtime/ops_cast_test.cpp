// ag::cast between every pair of dtypes: saturating float -> int (NaN -> 0), wrapping int -> int,
// != 0 for bool, and float narrowing.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using agtest::expect_values;
using agtest::make;

TEST(Cast, FloatToIntSaturatesAndNaNIsZero) {
  const float inf = INFINITY, nan = NAN;
  const ag::Tensor f = ag::constant({2.7f, -2.7f, 1e10f, -1e10f, nan, inf, -inf, 2147483520.f, -0.f});
  expect_values(ag::cast(f, ag::int32),
                std::vector<int32_t>{2, -2, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 2147483520, 0});
  expect_values(ag::cast(f, ag::int64), std::vector<int64_t>{2, -2, 10000000000, -10000000000, 0, INT64_MAX,
                                                             INT64_MIN, 2147483520, 0});
  const ag::Tensor d = ag::constant({1e19, -1e19, 9.0e15, double{NAN}, 2147483647.9, -2147483648.9});
  expect_values(ag::cast(d, ag::int64), std::vector<int64_t>{INT64_MAX, INT64_MIN, 9000000000000000, 0,
                                                             2147483647, -2147483648});
  expect_values(ag::cast(d, ag::int32),
                std::vector<int32_t>{INT32_MAX, INT32_MIN, INT32_MAX, 0, INT32_MAX, INT32_MIN});
}

TEST(Cast, ToBoolIsNonZero) {
  expect_values(ag::cast(ag::constant({0.f, -0.f, 0.5f, NAN, -INFINITY}), ag::bool_),
                std::vector<bool>{false, false, true, true, true});
  expect_values(ag::cast(ag::constant({0, 3, -1}), ag::bool_), std::vector<bool>{false, true, true});
  expect_values(ag::cast(ag::constant({int64_t{1} << 40, int64_t{0}}), ag::bool_), std::vector<bool>{true, false});
  expect_values(ag::cast(ag::constant({0.0, 1e-300}), ag::bool_), std::vector<bool>{false, true});
}

TEST(Cast, FromBool) {
  const ag::Tensor b = ag::constant({true, false, true});
  expect_values(ag::cast(b, ag::int32), std::vector<int32_t>{1, 0, 1});
  expect_values(ag::cast(b, ag::int64), std::vector<int64_t>{1, 0, 1});
  expect_values(ag::cast(b, ag::float32), std::vector<float>{1, 0, 1});
  expect_values(ag::cast(b, ag::float64), std::vector<double>{1, 0, 1});
}

TEST(Cast, BetweenIntegersWraps) {
  const ag::Tensor l = ag::constant({int64_t{1} << 32, (int64_t{1} << 31) + 5, int64_t{-1}, int64_t{-7}});
  expect_values(ag::cast(l, ag::int32), std::vector<int32_t>{0, INT32_MIN + 5, -1, -7});
  expect_values(ag::cast(ag::constant({INT32_MIN, 5}), ag::int64), std::vector<int64_t>{INT32_MIN, 5});
}

TEST(Cast, IntegersToFloats) {
  const ag::Tensor l = ag::constant({int64_t{1} << 53, (int64_t{1} << 53) + 1, int64_t{-3}});
  expect_values(ag::cast(l, ag::float64), std::vector<double>{9007199254740992.0, 9007199254740992.0, -3.0});
  expect_values(ag::cast(ag::constant({16777217, -5}), ag::float32), std::vector<float>{16777216.f, -5.f});
}

TEST(Cast, BetweenFloats) {
  const ag::Tensor d = ag::constant({0.1, 1e300, -1e300, double{NAN}});
  const ag::Tensor f = ag::cast(d, ag::float32);
  expect_values(f, std::vector<float>{0.1f, INFINITY, -INFINITY, NAN});
  expect_values(ag::cast(ag::constant({0.1f}), ag::float64), std::vector<double>{static_cast<double>(0.1f)});
}

TEST(Cast, ToTheSameDtypeKeepsValuesAndShape) {
  const ag::Tensor x = make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const ag::Tensor y = ag::cast(x, ag::int32);
  EXPECT_EQ(agtest::dims(y), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y.to_vector<int32_t>(), x.to_vector<int32_t>());
}

TEST(Cast, KeepsShapeIncludingEmptyAndScalar) {
  EXPECT_EQ(agtest::dims(ag::cast(ag::zeros({2, 0, 3}), ag::int32)), (std::vector<int64_t>{2, 0, 3}));
  const ag::Tensor s = ag::cast(ag::Tensor(3.9), ag::int32);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.item<int32_t>(), 3);
}

}  // namespace
