// Eager maximum/minimum/reduce_max/reduce_min order signed zeros as IEEE 754-2019 (-0 < +0),
// on every kernel path: scalars, vector rows with their tails, one-row reductions and
// row-by-row accumulation. runtime.kernels_<level> runs this for each instruction-set level
// (Eigen's packet max/min differ between them); tests/jit/signed_zero_test.cpp checks that
// compiled code agrees.
#include <bit>
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace {

constexpr uint32_t kPosBits = 0x00000000u, kNegBits = 0x80000000u;

std::vector<uint32_t> bits(const ag::Tensor& t) {
  std::vector<uint32_t> out;
  for (float v : t.to_vector<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  return out;
}

// 37 elements: a main loop and a tail for every vector width.
ag::Tensor zeros(bool negative_first, int n = 37) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back((i % 2 == 0) == negative_first ? -0.0f : 0.0f);
  return ag::constant(v);
}

TEST(SignedZeros, MaximumIsPositiveZeroMinimumNegativeWhicheverOperandComesFirst) {
  const ag::Tensor a = zeros(true), b = zeros(false);
  for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
    EXPECT_EQ(bits(ag::maximum(x, y)), std::vector<uint32_t>(37, kPosBits));
    EXPECT_EQ(bits(ag::minimum(x, y)), std::vector<uint32_t>(37, kNegBits));
  }
  EXPECT_EQ(bits(ag::maximum(ag::Tensor(-0.0f), ag::Tensor(0.0f)))[0], kPosBits);
  EXPECT_EQ(bits(ag::minimum(ag::Tensor(0.0f), ag::Tensor(-0.0f)))[0], kNegBits);
}

TEST(SignedZeros, ReductionsOverRowsAndAcrossRows) {
  const ag::Tensor m = ag::stack({zeros(true), zeros(false)});  // [2, 37]
  EXPECT_EQ(bits(ag::reduce_max(m, 1)), std::vector<uint32_t>(2, kPosBits));
  EXPECT_EQ(bits(ag::reduce_min(m, 1)), std::vector<uint32_t>(2, kNegBits));
  EXPECT_EQ(bits(ag::reduce_max(m, 0)), std::vector<uint32_t>(37, kPosBits));
  EXPECT_EQ(bits(ag::reduce_min(m, 0)), std::vector<uint32_t>(37, kNegBits));
  // One sign only: the extreme keeps it.
  EXPECT_EQ(bits(ag::reduce_max(ag::constant(std::vector<float>(37, -0.0f))))[0], kNegBits);
  EXPECT_EQ(bits(ag::reduce_min(ag::constant(std::vector<float>(37, 0.0f))))[0], kPosBits);
}

}  // namespace
