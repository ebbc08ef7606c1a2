// Comparisons (bool results), logical ops and & | ^ ~ on bool tensors, and ag::where.
#include <cmath>

#include "test_util.h"

namespace {

using agtest::make;
using agtest::ref_binary;

template <class T>
class Compare : public ::testing::Test {};
TYPED_TEST_SUITE(Compare, agtest::NumericTypes);

TYPED_TEST(Compare, AllSixMatchTheReference) {
  using T = TypeParam;
  // Few distinct values so that equal pairs occur.
  const auto a = agtest::sample<T>(12, 41, false, 2), b = agtest::sample<T>(4, 42, false, 2);
  const std::vector<int64_t> sa = {3, 4}, sb = {4};
  const ag::Tensor x = make(a, sa), y = make(b, sb);
  auto check = [&](const ag::Tensor& r, auto f) {
    EXPECT_EQ(r.dtype(), ag::bool_);
    agtest::expect_values(r, ref_binary<bool>(a, sa, b, sb, f));
  };
  check(x < y, [](T p, T q) { return p < q; });
  check(x <= y, [](T p, T q) { return p <= q; });
  check(x > y, [](T p, T q) { return p > q; });
  check(x >= y, [](T p, T q) { return p >= q; });
  check(x == y, [](T p, T q) { return p == q; });
  check(x != y, [](T p, T q) { return p != q; });
  check(ag::less(x, y), [](T p, T q) { return p < q; });
  check(ag::less_equal(x, y), [](T p, T q) { return p <= q; });
  check(ag::greater(x, y), [](T p, T q) { return p > q; });
  check(ag::greater_equal(x, y), [](T p, T q) { return p >= q; });
  check(ag::equal(x, y), [](T p, T q) { return p == q; });
  check(ag::not_equal(x, y), [](T p, T q) { return p != q; });
  // A scalar on either side.
  const ag::Tensor l = 0 < x;
  std::vector<bool> e;
  for (T v : a) e.push_back(0 < v);
  agtest::expect_values(l, e);
}

TEST(Compare, NaNComparesUnequal) {
  const ag::Tensor x = ag::constant({NAN, 1.f});
  EXPECT_EQ((x == x).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((x != x).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((x < 2.f).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((x >= 2.f).to_vector<bool>(), (std::vector<bool>{false, false}));
}

TEST(Compare, BoolTensorsCompareForEqualityOnly) {
  const ag::Tensor b = ag::constant({true, false});
  EXPECT_EQ((b == ag::constant({true, true})).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((b != true).to_vector<bool>(), (std::vector<bool>{false, true}));
  AG_EXPECT_ERROR(ag::TypeError, b < b, "operator<", "bool");
  AG_EXPECT_ERROR(ag::TypeError, b >= b, "operator>=", "bool");
}

TEST(Logical, AndOrXorNot) {
  const ag::Tensor a = ag::constant({true, true, false, false});
  const ag::Tensor b = ag::constant({true, false, true, false});
  EXPECT_EQ((a & b).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ((a | b).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ((a ^ b).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(ag::logical_and(a, b).to_vector<bool>(), (a & b).to_vector<bool>());
  EXPECT_EQ(ag::logical_or(a, b).to_vector<bool>(), (a | b).to_vector<bool>());
  EXPECT_EQ(ag::logical_xor(a, b).to_vector<bool>(), (a ^ b).to_vector<bool>());
  EXPECT_EQ((~a).to_vector<bool>(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ((a | false).to_vector<bool>(), a.to_vector<bool>());
  EXPECT_EQ((true ^ a).to_vector<bool>(), (~a).to_vector<bool>());
  ag::Tensor c = a;
  c &= b;
  EXPECT_EQ(c.to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  c |= true;
  EXPECT_EQ(c.to_vector<bool>(), (std::vector<bool>{true, true, true, true}));
  c ^= b;
  EXPECT_EQ(c.to_vector<bool>(), (std::vector<bool>{false, true, false, true}));
}

TEST(Logical, NonBoolOperandsAreTypeErrors) {
  const ag::Tensor i = ag::constant({1, 0});
  const ag::Tensor b = ag::constant({true, false});
  AG_EXPECT_ERROR(ag::TypeError, i & i, "operator&", "int32");
  AG_EXPECT_ERROR(ag::TypeError, b | i, "operator|", "bool", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::constant({1.f}) ^ ag::constant({1.f}), "operator^", "float32");
  AG_EXPECT_ERROR(ag::TypeError, ag::logical_and(i, b), "logical_and", "int32");
}

template <class T>
class Where : public ::testing::Test {};
TYPED_TEST_SUITE(Where, agtest::NumericTypes);

TYPED_TEST(Where, SelectsElementwise) {
  using T = TypeParam;
  const auto a = agtest::sample<T>(6, 43), b = agtest::sample<T>(6, 44);
  const ag::Tensor c = ag::constant({true, false, false, true, true, false});
  const ag::Tensor w = ag::where(c, make(a, {6}), make(b, {6}));
  std::vector<T> e;
  const auto cv = c.to_vector<bool>();
  for (size_t i = 0; i < 6; ++i) e.push_back(cv[i] ? a[i] : b[i]);
  agtest::expect_values(w, e);
  // Weak scalars take the other branch's dtype.
  const ag::Tensor z = ag::where(c, make(a, {6}), 0);
  EXPECT_EQ(z.dtype(), ag::dtype_of<T>());
  for (size_t i = 0; i < 6; ++i) e[i] = cv[i] ? a[i] : T(0);
  agtest::expect_values(z, e);
}

TEST(Where, BoolBranchesAndErrors) {
  const ag::Tensor c = ag::constant({true, false});
  EXPECT_EQ(ag::where(c, ag::constant({false, false}), true).to_vector<bool>(), (std::vector<bool>{false, true}));
  AG_EXPECT_ERROR(ag::TypeError, ag::where(ag::constant({1, 0}), 1, 2), "ag::where", "condition", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::where(c, ag::constant({1, 2}), ag::constant({1.f, 2.f})), "ag::where", "int32",
                  "float32");
  AG_EXPECT_ERROR(ag::TypeError, ag::where(c, ag::constant({1, 2}), 0.5), "ag::where", "int32");
}

}  // namespace
