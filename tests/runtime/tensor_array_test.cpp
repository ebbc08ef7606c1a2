// ag::TensorArray eagerly: write/read/stack/size, dynamic and fixed sizes, and the errors for
// out-of-range indices, dtypes and element shapes.
#include "ag/tensor_array.h"

#include "test_util.h"

namespace {

TEST(TensorArray, WriteReadStackSize) {
  ag::TensorArray ta(ag::float32);
  EXPECT_EQ(ta.size().item<int32_t>(), 0);
  EXPECT_EQ(ta.size().dtype(), ag::int32);
  for (int i = 0; i < 4; ++i) ta = ta.write(i, ag::constant({static_cast<float>(i), static_cast<float>(10 * i)}));
  EXPECT_EQ(ta.size().item<int32_t>(), 4);
  EXPECT_EQ(ta.read(2).to_vector<float>(), (std::vector<float>{2, 20}));
  EXPECT_EQ(ta.read(ag::Tensor(int64_t{3})).to_vector<float>(), (std::vector<float>{3, 30}));
  const ag::Tensor s = ta.stack();
  EXPECT_EQ(s.shape(), (ag::Shape{4, 2}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{0, 0, 1, 10, 2, 20, 3, 30}));
  EXPECT_EQ(ta.dtype(), ag::float32);
}

TEST(TensorArray, EagerWritesShowInTheOriginal) {
  ag::TensorArray ta(ag::int32, 2);
  ag::TensorArray other = ta.write(0, ag::Tensor(5));
  (void)other;
  EXPECT_EQ(ta.read(0).item<int32_t>(), 5);
}

TEST(TensorArray, DynamicSizeGrowsAndUnwrittenSlotsAreZeros) {
  ag::TensorArray ta(ag::int64);
  ta = ta.write(3, ag::constant({int64_t{7}, int64_t{8}}));
  EXPECT_EQ(ta.size().item<int32_t>(), 4);
  EXPECT_EQ(ta.read(1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(ta.stack().to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 7, 8}));
  ta = ta.write(1, ag::constant({int64_t{1}, int64_t{2}}));  // overwrite an unwritten slot
  EXPECT_EQ(ta.read(1).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

TEST(TensorArray, FixedSize) {
  ag::TensorArray ta(ag::float64, 2, /*dynamic_size=*/false);
  EXPECT_EQ(ta.size().item<int32_t>(), 2);
  ta = ta.write(1, ag::Tensor(2.5));
  EXPECT_EQ(ta.stack().to_vector<double>(), (std::vector<double>{0, 2.5}));
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ta.write(2, ag::Tensor(1.0)), "TensorArray::write", "index 2", "size 2");
  EXPECT_EQ(ta.size().item<int32_t>(), 2);
}

TEST(TensorArray, ScalarElementsStackToAVector) {
  ag::TensorArray ta(ag::bool_, 0);
  ta = ta.write(0, ag::Tensor(true));
  ta = ta.write(1, ag::Tensor(false));
  const ag::Tensor s = ta.stack();
  EXPECT_EQ(s.shape(), (ag::Shape{2}));
  EXPECT_EQ(s.to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(TensorArray, EmptyStack) {
  const ag::Tensor s = ag::TensorArray(ag::float32).stack();
  EXPECT_EQ(s.num_elements(), 0);
  EXPECT_EQ(s.shape()[0], 0);
  EXPECT_EQ(s.dtype(), ag::float32);
}

TEST(TensorArray, Errors) {
  ag::TensorArray ta(ag::float32, 2);
  ta = ta.write(0, ag::constant({1.f, 2.f}));
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ta.read(2), "TensorArray::read", "index 2", "size 2");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ta.read(-1), "TensorArray::read", "index -1");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ta.write(-1, ag::constant({1.f, 2.f})), "TensorArray::write",
                  "index -1");
  AG_EXPECT_ERROR(ag::TypeError, ta.write(1, ag::constant({1, 2})), "TensorArray::write", "float32", "int32");
  AG_EXPECT_ERROR(ag::ValueError, ta.write(1, ag::constant({1.f, 2.f, 3.f})), "TensorArray::write", "[2]", "[3]");
  AG_EXPECT_ERROR(ag::TypeError, ta.read(1.5), "TensorArray::read", "integer");
  AG_EXPECT_ERROR(ag::TypeError, ta.read(ag::Tensor(1.f)), "TensorArray::read", "integer", "float32");
  AG_EXPECT_ERROR(ag::ValueError, ta.write(1, ag::Tensor()), "TensorArray::write", "no value");
  AG_EXPECT_ERROR(ag::ValueError, ag::TensorArray(ag::float32, -1), "TensorArray", "size");
  ag::TensorArray never(ag::int32, 3);
  AG_EXPECT_ERROR(ag::InvalidArgumentError, never.read(0), "TensorArray::read", "never written");
}

}  // namespace
