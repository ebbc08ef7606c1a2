// ag::Tensor itself: scalar constructors, accessors, item/to_vector/data, explicit operator bool,
// range-for over dim 0, and the default-constructed (valueless) tensor.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;

TEST(Tensor, ScalarConstructorsKeepTheValue) {
  EXPECT_EQ(ag::Tensor(int64_t{1} << 40).item<int64_t>(), int64_t{1} << 40);
  EXPECT_EQ(ag::Tensor(-7).item<int32_t>(), -7);
  EXPECT_EQ(ag::Tensor(2.5f).item<float>(), 2.5f);
  EXPECT_EQ(ag::Tensor(0.1).item<double>(), 0.1);
  EXPECT_EQ(ag::Tensor(true).item<bool>(), true);
  // Values a double cannot hold exactly survive.
  EXPECT_EQ(ag::Tensor(INT64_MAX).item<int64_t>(), INT64_MAX);
  EXPECT_EQ(ag::Tensor((int64_t{1} << 53) + 1).item<int64_t>(), (int64_t{1} << 53) + 1);
  // Values an int64 cannot hold are fine as floats (no UB converting them).
  EXPECT_EQ(ag::Tensor(1e30f).item<float>(), 1e30f);
  EXPECT_TRUE(std::isnan(ag::Tensor(NAN).item<float>()));
  EXPECT_EQ(ag::Tensor(-INFINITY).item<double>(), -INFINITY);
  const ag::Tensor s(3);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_TRUE(s.shape().empty());
  EXPECT_FALSE(s.is_symbolic());
  EXPECT_TRUE(s.has_value());
}

TEST(Tensor, ShapeAccessors) {
  const ag::Tensor t = ag::zeros({2, 0, 3});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_EQ(t.shape()[2], 3);
  EXPECT_EQ(t.shape().to_vector(), (Dims{2, 0, 3}));
  EXPECT_EQ(t.shape().str(), "[2,0,3]");
  EXPECT_EQ(t.shape().tf_str(), "(2, 0, 3)");
  EXPECT_EQ(ag::Shape{4}.tf_str(), "(4,)");
  EXPECT_EQ(ag::Shape{}.tf_str(), "()");
}

TEST(Tensor, RankUpTo8AndNoMore) {
  const ag::Tensor t = ag::ones({1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_EQ(t.rank(), 8);
  EXPECT_EQ(ag::reduce_sum(t).item<float>(), 16.f);
  AG_EXPECT_ERROR(ag::ValueError, ag::expand_dims(t, 0), "rank", "8");
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({1, 1, 1, 1, 1, 1, 1, 1, 1}), "rank", "8");
}

TEST(Tensor, ItemConvertsAndChecksTheElementCount) {
  EXPECT_EQ(ag::Tensor(3.75).item<int>(), 3);
  EXPECT_EQ(ag::Tensor(-3.75f).item<int64_t>(), -3);
  EXPECT_EQ(ag::Tensor(7).item<double>(), 7.0);
  EXPECT_EQ(ag::constant({{5}}).item<int>(), 5);  // one element, any rank
  EXPECT_EQ(ag::Tensor(0.5f).item<bool>(), true);  // bool means != 0, as for operator bool
  EXPECT_EQ(ag::Tensor(true).item<int>(), 1);
  // Float to integer saturates (NaN -> 0), like ag::cast: never UB.
  EXPECT_EQ(ag::Tensor(1e20).item<int32_t>(), INT32_MAX);
  EXPECT_EQ(ag::Tensor(NAN).item<int64_t>(), 0);
  AG_EXPECT_ERROR(ag::ValueError, ag::constant({1, 2}).item<int>(), "item()", "one element", "[2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({0}).item<float>(), "item()", "[0]");
}

TEST(Tensor, ToVectorIsRowMajorAndConverts) {
  const ag::Tensor t = ag::constant({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ag::constant({0.5f, -1.5f}).to_vector<int>(), (std::vector<int>{0, -1}));
  EXPECT_EQ(ag::constant({NAN, 1e30f}).to_vector<int>(), (std::vector<int>{0, INT32_MAX}));
  EXPECT_EQ(ag::constant({0.f, 0.25f}).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_TRUE(ag::zeros({0, 4}).to_vector<float>().empty());
  EXPECT_EQ(ag::Tensor(4).to_vector<int64_t>(), (std::vector<int64_t>{4}));
}

TEST(Tensor, DataIsTheRowMajorBufferOfTheExactType) {
  const ag::Tensor t = ag::constant({{1.f, 2.f}, {3.f, 4.f}});
  const float* p = t.data<float>();
  EXPECT_EQ(p[0], 1.f);
  EXPECT_EQ(p[3], 4.f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);  // 64-byte aligned
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ag::zeros({1 << 20}).data<float>()) % 64, 0u);
  EXPECT_EQ(t[1].data<float>()[0], 3.f);
  AG_EXPECT_ERROR(ag::TypeError, t.data<double>(), "data", "float32", "float64");
  AG_EXPECT_ERROR(ag::TypeError, t.data<int32_t>(), "data", "float32", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::constant({1}).data<int64_t>(), "data", "int32", "int64");
  AG_EXPECT_ERROR(ag::TypeError, ag::constant({1}).data<uint32_t>(), "data", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::constant({true}).data<uint8_t>(), "data", "bool");
  EXPECT_EQ(ag::constant({true, false}).data<bool>()[1], false);
  EXPECT_EQ(ag::constant({int64_t{9}}).data<int64_t>()[0], 9);
}

TEST(Tensor, ExplicitBoolOnConcreteScalars) {
  EXPECT_TRUE(static_cast<bool>(ag::Tensor(1)));
  EXPECT_FALSE(static_cast<bool>(ag::Tensor(0)));
  EXPECT_TRUE(static_cast<bool>(ag::Tensor(-0.5f)));
  EXPECT_FALSE(static_cast<bool>(ag::Tensor(0.0)));
  EXPECT_TRUE(static_cast<bool>(ag::Tensor(NAN)));
  EXPECT_FALSE(static_cast<bool>(ag::Tensor(false)));
  EXPECT_TRUE(static_cast<bool>(ag::constant({{true}})));  // one element of any rank
  const ag::Tensor x = ag::constant({1, 2, 3});
  if (ag::reduce_sum(x) > 5) SUCCEED();
  else ADD_FAILURE() << "if on a tensor condition";
  // && || ! are the built-in operators on the contextual bool (never overloaded: an overload
  // would evaluate both operands and return a tensor).
  static_assert(std::is_same_v<decltype(std::declval<ag::Tensor>() && std::declval<ag::Tensor>()), bool>);
  static_assert(std::is_same_v<decltype(std::declval<ag::Tensor>() || std::declval<ag::Tensor>()), bool>);
  static_assert(std::is_same_v<decltype(!std::declval<ag::Tensor>()), bool>);
  EXPECT_TRUE(ag::Tensor(true) && !ag::Tensor(false));
  EXPECT_TRUE(ag::Tensor(0) || ag::Tensor(2));
  AG_EXPECT_ERROR(ag::ValueError, static_cast<bool>(x), "[3]", "ambiguous", "reduce_any");
  AG_EXPECT_ERROR(ag::ValueError, static_cast<bool>(ag::zeros({0})), "[0]", "ambiguous");
  AG_EXPECT_ERROR(ag::ValueError, static_cast<bool>(ag::Tensor()), "no value");
}

TEST(Tensor, RangeForIteratesDimZero) {
  const ag::Tensor t = ag::constant({{1, 2}, {3, 4}, {5, 6}});
  std::vector<std::vector<int32_t>> rows;
  for (ag::Tensor row : t) {
    EXPECT_EQ(row.shape(), (ag::Shape{2}));
    rows.push_back(row.to_vector<int32_t>());
  }
  EXPECT_EQ(rows, (std::vector<std::vector<int32_t>>{{1, 2}, {3, 4}, {5, 6}}));
  std::vector<float> elems;
  for (const ag::Tensor& e : ag::constant({1.5f, 2.5f})) {
    EXPECT_EQ(e.rank(), 0);
    elems.push_back(e.item<float>());
  }
  EXPECT_EQ(elems, (std::vector<float>{1.5f, 2.5f}));
  int n = 0;
  for (ag::Tensor row : ag::zeros({0, 3})) n += static_cast<int>(row.rank()) + 1;
  EXPECT_EQ(n, 0);
  AG_EXPECT_ERROR(ag::ValueError, [] {
    for (ag::Tensor e : ag::Tensor(1)) (void)e;
    return 0;
  }(), "scalar");
}

TEST(Tensor, DefaultConstructedHasNoValueAndReadingItIsAnError) {
  const ag::Tensor t;
  EXPECT_FALSE(t.has_value());
  EXPECT_FALSE(t.is_symbolic());
  AG_EXPECT_ERROR(ag::ValueError, t.dtype(), "no value", "default-constructed");
  AG_EXPECT_ERROR(ag::ValueError, t.shape(), "no value");
  AG_EXPECT_ERROR(ag::ValueError, t.rank(), "no value");
  AG_EXPECT_ERROR(ag::ValueError, t.num_elements(), "no value");
  AG_EXPECT_ERROR(ag::ValueError, t.item<float>(), "item()", "no value");
  AG_EXPECT_ERROR(ag::ValueError, t.to_vector<float>(), "to_vector()", "no value");
  AG_EXPECT_ERROR(ag::ValueError, t.data<float>(), "data()", "no value");
  AG_EXPECT_ERROR(ag::ValueError, t[0], "no value");
  AG_EXPECT_ERROR(ag::ValueError, t.begin(), "no value");
  EXPECT_EQ(t.str(), "Tensor(<no value>)");
  // Assigning gives it a value; copies and moves keep it.
  ag::Tensor u;
  u = ag::Tensor(2);
  ag::Tensor v = std::move(u);
  EXPECT_EQ(v.item<int>(), 2);
  EXPECT_FALSE(u.has_value());  // NOLINT: moved-from is valueless by contract
  const ag::Tensor& alias = v;
  v = alias;  // self-assignment keeps the value
  EXPECT_EQ(v.item<int>(), 2);
}

}  // namespace
