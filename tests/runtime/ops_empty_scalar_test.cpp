// Scalars (rank 0) and empty tensors (a 0 dim) through every op family.
#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;

TEST(Scalars, EveryFamily) {
  const ag::Tensor a(6.f), b(4.f);
  EXPECT_EQ((a + b).rank(), 0);
  EXPECT_EQ((a - b).item<float>(), 2.f);
  EXPECT_EQ((a / b).item<float>(), 1.5f);
  EXPECT_EQ(ag::pow(a, 2.f).item<float>(), 36.f);
  EXPECT_EQ((a > b).item<bool>(), true);
  EXPECT_EQ((a > b).rank(), 0);
  EXPECT_EQ(ag::sqrt(b).item<float>(), 2.f);
  EXPECT_EQ(ag::where(a < b, a, b).item<float>(), 4.f);
  EXPECT_EQ(ag::cast(a, ag::int64).item<int64_t>(), 6);
  EXPECT_EQ(ag::reduce_sum(a).item<float>(), 6.f);
  EXPECT_EQ(ag::reduce_max(a, {}, true).rank(), 0);
  EXPECT_EQ(agtest::dims(ag::reshape(a, {1, 1, 1})), (Dims{1, 1, 1}));
  EXPECT_EQ(agtest::dims(ag::expand_dims(a, 0)), (Dims{1}));
  EXPECT_EQ(ag::squeeze(a).rank(), 0);
  EXPECT_EQ(ag::transpose(a).item<float>(), 6.f);
  EXPECT_EQ(agtest::dims(ag::stack({a, b})), (Dims{2}));
  EXPECT_EQ(ag::shape_of(a).num_elements(), 0);
  EXPECT_EQ(ag::Tensor(7) % 4 == 3 ? 1 : 0, 1);
  // A scalar with a rank-1 tensor of one element broadcasts to rank 1.
  EXPECT_EQ(agtest::dims(a + ag::constant({1.f})), (Dims{1}));
}

TEST(Empty, ElementwiseOps) {
  const ag::Tensor e = ag::zeros({0, 3});
  const ag::Tensor r = ag::constant({1.f, 2.f, 3.f});
  EXPECT_EQ(agtest::dims(e + r), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(e * 2), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(ag::exp(e)), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(e < r), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(ag::where(e < r, e, r)), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(ag::cast(e, ag::int32)), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(ag::zeros({0}) + 1.f), (Dims{0}));
  EXPECT_EQ(agtest::dims(ag::zeros({2, 0}) + ag::zeros({2, 1})), (Dims{2, 0}));
  // Integer division of an empty tensor by a zero divisor has nothing to divide.
  EXPECT_EQ(agtest::dims(ag::zeros({0}, ag::int32) / ag::zeros({1}, ag::int32)), (Dims{0}));
}

TEST(Empty, ReductionsAndLayout) {
  const ag::Tensor e = ag::zeros({0, 3}, ag::int32);
  EXPECT_EQ(ag::reduce_sum(e, 0).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(agtest::dims(ag::reduce_sum(e, 1)), (Dims{0}));
  EXPECT_EQ(agtest::dims(ag::reduce_sum(e, 1, true)), (Dims{0, 1}));
  EXPECT_EQ(agtest::dims(ag::transpose(e)), (Dims{3, 0}));
  EXPECT_EQ(agtest::dims(ag::reshape(e, {3, 0})), (Dims{3, 0}));
  EXPECT_EQ(agtest::dims(ag::concat({e, e}, 0)), (Dims{0, 3}));
  EXPECT_EQ(agtest::dims(ag::concat({e, ag::ones({2, 3}, ag::int32)}, 0)), (Dims{2, 3}));
  EXPECT_EQ(agtest::dims(ag::stack({e, e})), (Dims{2, 0, 3}));
  EXPECT_EQ(agtest::dims(ag::slice(e, {0, 1}, {0, 2})), (Dims{0, 2}));
  EXPECT_EQ(agtest::dims(ag::gather(e, ag::constant({2, 0}), 1)), (Dims{0, 2}));
  EXPECT_EQ(agtest::dims(ag::expand_dims(e, 1)), (Dims{0, 1, 3}));
  EXPECT_EQ(agtest::dims(ag::matmul(e, ag::ones({3, 4}, ag::int32))), (Dims{0, 4}));
  EXPECT_EQ(ag::shape_of(e).to_vector<int64_t>(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ag::argmax(e, 1).num_elements(), 0);
  int rows = 0;
  for (const ag::Tensor& row : e) rows += static_cast<int>(row.num_elements()) + 1;
  EXPECT_EQ(rows, 0);
}

}  // namespace
