// Dtype rules (docs/eager.md, "Dtype rules"): C++ scalars are weak and take the tensor's
// dtype; a floating scalar with an integer tensor, and two tensors of different dtypes, are
// TypeErrors naming the op and both dtypes and suggesting ag::cast.
#include "test_util.h"

namespace {

TEST(DTypeRules, CxxScalarsHaveTheirNaturalDtypeAlone) {
  EXPECT_EQ(ag::Tensor(1).dtype(), ag::int32);
  EXPECT_EQ(ag::Tensor(int64_t{1}).dtype(), ag::int64);
  EXPECT_EQ(ag::Tensor(1.f).dtype(), ag::float32);
  EXPECT_EQ(ag::Tensor(1.0).dtype(), ag::float64);
  EXPECT_EQ(ag::Tensor(true).dtype(), ag::bool_);
  EXPECT_EQ(ag::Tensor(int16_t{3}).dtype(), ag::int32);
  EXPECT_EQ(ag::Tensor(3u).dtype(), ag::int64);  // uint32 does not fit int32
}

TEST(DTypeRules, WeakScalarTakesTheTensorsDtype) {
  const ag::Tensor f = ag::constant({1.f, 2.f});
  EXPECT_EQ((f * 2).dtype(), ag::float32);
  EXPECT_EQ((f * 2.0).dtype(), ag::float32);  // a double literal does not widen a float32 tensor
  EXPECT_EQ((2.0 * f).dtype(), ag::float32);
  EXPECT_EQ((f + int64_t{1}).dtype(), ag::float32);
  EXPECT_EQ((f * 0.1).to_vector<float>(), (std::vector<float>{0.1f, 0.2f}));

  const ag::Tensor d = ag::constant({1.0, 2.0});
  EXPECT_EQ((d + 1.5f).dtype(), ag::float64);
  const ag::Tensor i64 = ag::constant({int64_t{1}, int64_t{2}});
  EXPECT_EQ((i64 + 1).dtype(), ag::int64);
  EXPECT_EQ((1 - i64).to_vector<int64_t>(), (std::vector<int64_t>{0, -1}));
  const ag::Tensor i32 = ag::constant({1, 2});
  EXPECT_EQ((i32 * int64_t{3}).dtype(), ag::int32);
  EXPECT_EQ((i32 * int64_t{3}).to_vector<int32_t>(), (std::vector<int32_t>{3, 6}));
  // Comparisons resolve the scalar the same way and give bool.
  EXPECT_EQ((i32 > 1).dtype(), ag::bool_);
  EXPECT_EQ((f <= 1.5).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(DTypeRules, FloatScalarWithIntegerTensorIsATypeError) {
  const ag::Tensor i = ag::constant({1, 2});
  AG_EXPECT_ERROR(ag::TypeError, i + 1.5, "operator+", "int32", "1.5", "ag::cast");
  AG_EXPECT_ERROR(ag::TypeError, 0.5f * i, "operator*", "int32", "0.5");
  AG_EXPECT_ERROR(ag::TypeError, i < 2.5, "operator<", "int32");
  ag::Tensor j = i;
  AG_EXPECT_ERROR(ag::TypeError, j += 0.5, "operator+", "int32");
  EXPECT_EQ(j.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));  // unchanged by the failed op
}

TEST(DTypeRules, IntegerScalarThatDoesNotFitInt32IsAnError) {
  const ag::Tensor i = ag::constant({1, 2});
  AG_EXPECT_ERROR(ag::ValueError, i + (int64_t{1} << 40), "operator+", "int32");
}

TEST(DTypeRules, BoolScalarsAndTensors) {
  const ag::Tensor b = ag::constant({true, false});
  EXPECT_EQ((b & true).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((b == false).to_vector<bool>(), (std::vector<bool>{false, true}));
  AG_EXPECT_ERROR(ag::TypeError, b & 1, "operator&", "bool");
  AG_EXPECT_ERROR(ag::TypeError, ag::constant({1.f}) + true, "operator+", "float32", "bool");
  AG_EXPECT_ERROR(ag::TypeError, ag::constant({1}) * false, "operator*", "int32", "bool");
}

TEST(DTypeRules, TwoTensorsOfDifferentDtypesAreATypeErrorNamingBoth) {
  const ag::Tensor f = ag::constant({1.f, 2.f});
  const ag::Tensor d = ag::constant({1.0, 2.0});
  const ag::Tensor i = ag::constant({1, 2});
  const ag::Tensor l = ag::constant({int64_t{1}, int64_t{2}});
  AG_EXPECT_ERROR(ag::TypeError, f + i, "operator+", "float32", "int32", "ag::cast");
  AG_EXPECT_ERROR(ag::TypeError, i - f, "operator-", "int32", "float32", "ag::cast");
  AG_EXPECT_ERROR(ag::TypeError, f * d, "operator*", "float32", "float64");
  AG_EXPECT_ERROR(ag::TypeError, i / l, "operator/", "int32", "int64");
  AG_EXPECT_ERROR(ag::TypeError, ag::maximum(f, d), "ag::maximum", "float32", "float64");
  AG_EXPECT_ERROR(ag::TypeError, f < d, "operator<", "float32", "float64");
  AG_EXPECT_ERROR(ag::TypeError, ag::pow(i, f), "ag::pow", "int32", "float32");
  AG_EXPECT_ERROR(ag::TypeError, ag::floordiv(l, i), "ag::floordiv", "int64", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::matmul(ag::zeros({2, 2}), ag::zeros({2, 2}, ag::float64)), "ag::matmul",
                  "float32", "float64");
  // The fix works.
  EXPECT_EQ((ag::cast(i, ag::float32) + f).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
}

TEST(DTypeRules, ScalarsAloneFollowCxxPromotion) {
  // Two weak scalars (where's branches) combine like C++'s usual arithmetic conversions.
  const ag::Tensor c = ag::constant({true, false});
  EXPECT_EQ(ag::where(c, 1, 2).dtype(), ag::int32);
  EXPECT_EQ(ag::where(c, 1, 2.5).dtype(), ag::float64);
  EXPECT_EQ(ag::where(c, 1.f, int64_t{2}).dtype(), ag::float32);
  EXPECT_EQ(ag::where(c, 1, 2.5).to_vector<double>(), (std::vector<double>{1.0, 2.5}));
}

TEST(DTypeRules, ValuelessTensorInAnOpIsNamed) {
  const ag::Tensor none;
  AG_EXPECT_ERROR(ag::ValueError, none + 1, "operator+", "no value", "default-constructed");
  AG_EXPECT_ERROR(ag::ValueError, ag::exp(none), "ag::exp", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::reduce_sum(none), "ag::reduce_sum", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(none, none), "ag::matmul", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::reshape(none, {1}), "ag::reshape", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({none, none}, 0), "ag::concat", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::stack({ag::Tensor(1), none}), "ag::stack", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::cast(none, ag::int32), "ag::cast", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::transpose(none), "ag::transpose", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::where(none, 1, 2), "ag::where", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::fill({2}, none), "ag::fill", "no value");
}

}  // namespace
