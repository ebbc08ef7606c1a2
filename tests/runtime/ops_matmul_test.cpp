// matmul: 2-D and batched (with broadcast batch dims) against a triple loop, for every numeric
// dtype; empty inner/outer dims; shape and dtype errors.
#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;

// Reference batched matmul with NumPy broadcasting of the batch dims.
template <class T>
std::vector<T> ref_matmul(const std::vector<T>& a, const Dims& sa, const std::vector<T>& b, const Dims& sb,
                          Dims& out_shape) {
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const Dims ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Dims batch;
  EXPECT_TRUE(agtest::broadcast(ba, bb, batch));
  out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  std::vector<T> out;
  agtest::for_each_index(batch, [&](const Dims& idx) {
    const T* pa = a.data() + agtest::broadcast_offset(ba, idx) * m * k;
    const T* pb = b.data() + agtest::broadcast_offset(bb, idx) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T s = 0;
        for (int64_t p = 0; p < k; ++p) s += pa[i * k + p] * pb[p * n + j];
        out.push_back(s);
      }
  });
  return out;
}

// The permutation that swaps the last two of `rank` dims.
std::vector<int64_t> swapped_perm(size_t rank) {
  std::vector<int64_t> p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(i);
  std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

template <class T>
class MatMul : public ::testing::Test {};
TYPED_TEST_SUITE(MatMul, agtest::NumericTypes);

template <class T>
void check(const Dims& sa, const Dims& sb) {
  SCOPED_TRACE(::testing::Message() << "a " << ::testing::PrintToString(sa) << " b " << ::testing::PrintToString(sb));
  const auto a = agtest::sample<T>(agtest::count(sa), 71, false, 5);
  const auto b = agtest::sample<T>(agtest::count(sb), 72, false, 5);
  Dims out_shape;
  const auto expected = ref_matmul(a, sa, b, sb, out_shape);
  const ag::Tensor c = ag::matmul(agtest::make(a, sa), agtest::make(b, sb));
  EXPECT_EQ(agtest::dims(c), out_shape);
  agtest::expect_values(c, expected, std::is_same_v<T, float> ? 1e-5 : 1e-12, 1e-4);
}

TYPED_TEST(MatMul, TwoDimensional) {
  check<TypeParam>({3, 4}, {4, 5});
  check<TypeParam>({1, 7}, {7, 1});
  check<TypeParam>({7, 1}, {1, 7});
  check<TypeParam>({17, 33}, {33, 9});  // not a multiple of any SIMD width
  check<TypeParam>({64, 64}, {64, 64});
}

TYPED_TEST(MatMul, Batched) {
  check<TypeParam>({2, 3, 4}, {2, 4, 5});
  check<TypeParam>({2, 3, 3, 4}, {2, 3, 4, 2});
}

TYPED_TEST(MatMul, BroadcastBatchDims) {
  check<TypeParam>({2, 1, 3, 4}, {5, 4, 2});  // -> [2,5,3,2]
  check<TypeParam>({3, 4}, {2, 4, 5});        // a 2-D operand against a batch
  check<TypeParam>({2, 3, 4}, {4, 5});
  check<TypeParam>({1, 3, 4}, {6, 4, 2});
  check<TypeParam>({2, 1, 2, 1, 3, 4}, {1, 3, 1, 2, 4, 2});  // rank 6
}

TYPED_TEST(MatMul, EmptyDims) {
  using T = TypeParam;
  // k = 0: a sum over nothing is 0 everywhere.
  const ag::Tensor z = ag::matmul(ag::zeros({3, 0}, ag::dtype_of<T>()), ag::zeros({0, 2}, ag::dtype_of<T>()));
  EXPECT_EQ(agtest::dims(z), (Dims{3, 2}));
  agtest::expect_values(z, std::vector<T>(6, T(0)));
  check<T>({0, 3}, {3, 2});
  check<T>({2, 3}, {3, 0});
  check<T>({0, 2, 3}, {3, 4});
  const ag::Tensor zb = ag::matmul(ag::ones({2, 3, 0}, ag::dtype_of<T>()), ag::ones({2, 0, 4}, ag::dtype_of<T>()));
  agtest::expect_values(zb, std::vector<T>(24, T(0)));
}

TEST(MatMul, Errors) {
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(ag::zeros({2, 3}), ag::zeros({4, 5})), "ag::matmul", "[2,3]", "[4,5]");
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(ag::zeros({3}), ag::zeros({3, 2})), "ag::matmul", "rank", "[3]");
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(ag::Tensor(1.f), ag::zeros({1, 1})), "ag::matmul", "rank");
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(ag::zeros({2, 2, 3}), ag::zeros({3, 3, 4})), "ag::matmul", "[2]",
                  "[3]");
  AG_EXPECT_ERROR(ag::TypeError, ag::matmul(ag::zeros({2, 2}), ag::zeros({2, 2}, ag::int32)), "ag::matmul",
                  "float32", "int32");
  AG_EXPECT_ERROR(ag::TypeError, ag::matmul(ag::zeros({2, 2}, ag::bool_), ag::zeros({2, 2}, ag::bool_)),
                  "ag::matmul", "bool");
}

// a^T and b^T as flags: the product of the operands laid out transposed equals the product of
// the transposes, for every dtype, batch broadcasting and size (small and GEMM-sized).
template <class T>
void check_flags(const Dims& sa, const Dims& sb, bool ta, bool tb) {
  SCOPED_TRACE(::testing::Message() << "ta " << ta << " tb " << tb << " a " << ::testing::PrintToString(sa));
  Dims out_shape;
  const auto a = agtest::sample<T>(agtest::count(sa), 73, false, 5);
  const auto b = agtest::sample<T>(agtest::count(sb), 74, false, 5);
  // The stored operands are the transposes of a and b where a flag is set.
  const ag::Tensor at = ta ? ag::transpose(agtest::make(a, sa), swapped_perm(sa.size())) : agtest::make(a, sa);
  const ag::Tensor bt = tb ? ag::transpose(agtest::make(b, sb), swapped_perm(sb.size())) : agtest::make(b, sb);
  const ag::Tensor c = ag::matmul(at, bt, ta, tb);
  const auto expected = ref_matmul(a, sa, b, sb, out_shape);
  EXPECT_EQ(agtest::dims(c), out_shape);
  agtest::expect_values(c, expected, std::is_same_v<T, float> ? 1e-5 : 1e-12, 1e-4);
}

TYPED_TEST(MatMul, TransposeFlags) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_flags<TypeParam>({3, 4}, {4, 5}, ta, tb);
      check_flags<TypeParam>({2, 1, 3, 4}, {5, 4, 2}, ta, tb);
      check_flags<TypeParam>({70, 90}, {90, 33}, ta, tb);
    }
}

TEST(MatMul, TransposeFlagErrorsNameTheTransposedShapes) {
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(ag::zeros({2, 3}), ag::zeros({2, 5}), false, false), "ag::matmul", "[2,3] x [2,5]");
  AG_EXPECT_ERROR(ag::ValueError, ag::matmul(ag::zeros({2, 3}), ag::zeros({3, 5}), true, false), "[2,3]^T x [3,5]",
                  "a^T has 2 columns");
  EXPECT_EQ(agtest::dims(ag::matmul(ag::zeros({2, 3}), ag::zeros({5, 3}), false, true)), (Dims{2, 5}));
}

TEST(MatMul, IdentityAndTranspose) {
  const ag::Tensor a = ag::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  EXPECT_EQ(ag::matmul(a, ag::eye(2)).to_vector<float>(), a.to_vector<float>());
  EXPECT_EQ(ag::matmul(ag::transpose(a), a).to_vector<float>(), (std::vector<float>{35, 44, 44, 56}));
}

}  // namespace
