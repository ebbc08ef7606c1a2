// Integer division semantics (docs/eager.md, "Ops"): / and % truncate like C++, floordiv and
// floormod floor, INT_MIN / -1 never traps, division by zero is an InvalidArgumentError.
#include <limits>

#include "test_util.h"

namespace {

template <class T>
class IntDiv : public ::testing::Test {};
TYPED_TEST_SUITE(IntDiv, agtest::IntTypes);

TYPED_TEST(IntDiv, SignsOfOperands) {
  using T = TypeParam;
  const ag::Tensor x = agtest::make<T>({7, -7, 7, -7, 6, -6, 0}, {7});
  const ag::Tensor y = agtest::make<T>({2, 2, -2, -2, 3, 3, -5}, {7});
  EXPECT_EQ((x / y).template to_vector<int64_t>(), (std::vector<int64_t>{3, -3, -3, 3, 2, -2, 0}));
  EXPECT_EQ((x % y).template to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 1, -1, 0, 0, 0}));
  EXPECT_EQ(ag::floordiv(x, y).template to_vector<int64_t>(), (std::vector<int64_t>{3, -4, -4, 3, 2, -2, 0}));
  EXPECT_EQ(ag::floormod(x, y).template to_vector<int64_t>(), (std::vector<int64_t>{1, 1, -1, -1, 0, 0, 0}));
  // The identity x == (x / y) * y + x % y holds for both pairs.
  EXPECT_EQ(((x / y) * y + x % y).template to_vector<int64_t>(), x.template to_vector<int64_t>());
  EXPECT_EQ((ag::floordiv(x, y) * y + ag::floormod(x, y)).template to_vector<int64_t>(),
            x.template to_vector<int64_t>());
}

TYPED_TEST(IntDiv, MinByMinusOneWrapsInsteadOfTrapping) {
  using T = TypeParam;
  constexpr T lo = std::numeric_limits<T>::min();
  const ag::Tensor x = agtest::make<T>({lo, lo, 5}, {3});
  const ag::Tensor y = agtest::make<T>({-1, 1, -1}, {3});
  EXPECT_EQ((x / y).template to_vector<T>(), (std::vector<T>{lo, lo, -5}));
  EXPECT_EQ((x % y).template to_vector<T>(), (std::vector<T>{0, 0, 0}));
  EXPECT_EQ(ag::floordiv(x, y).template to_vector<T>(), (std::vector<T>{lo, lo, -5}));
  EXPECT_EQ(ag::floormod(x, y).template to_vector<T>(), (std::vector<T>{0, 0, 0}));
  EXPECT_EQ((x / -1).template to_vector<T>(), (std::vector<T>{lo, lo, -5}));
}

TYPED_TEST(IntDiv, DivisionByZeroRaises) {
  using T = TypeParam;
  const ag::Tensor x = agtest::make<T>({1, 2, 3}, {3});
  const ag::Tensor y = agtest::make<T>({1, 0, 1}, {3});
  AG_EXPECT_ERROR(ag::InvalidArgumentError, x / y, "operator/", "division by zero");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, x % y, "operator%", "division by zero");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::floordiv(x, y), "ag::floordiv", "division by zero");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::floormod(x, y), "ag::floormod", "division by zero");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, x / 0, "operator/", "division by zero");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, 1 / (x - 2), "operator/", "division by zero");
  // A zero in a broadcast divisor.
  AG_EXPECT_ERROR(ag::InvalidArgumentError, agtest::make<T>({1, 2, 3, 4}, {2, 2}) / agtest::make<T>({0}, {1}),
                  "division by zero");
  ag::Tensor z = x;
  AG_EXPECT_ERROR(ag::InvalidArgumentError, z /= 0, "division by zero");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, z %= 0, "division by zero");
}

TEST(IntDiv, ModuloOfFloatsIsFmod) {
  const ag::Tensor x = ag::constant({7.5, -7.5});
  EXPECT_EQ((x % 2.0).to_vector<double>(), (std::vector<double>{1.5, -1.5}));
  EXPECT_EQ(ag::floormod(x, 2.0).to_vector<double>(), (std::vector<double>{1.5, 0.5}));
  EXPECT_EQ(ag::floordiv(x, 2.0).to_vector<double>(), (std::vector<double>{3.0, -4.0}));
  EXPECT_EQ(ag::floormod(x, -2.0).to_vector<double>(), (std::vector<double>{-0.5, -1.5}));
}

}  // namespace
