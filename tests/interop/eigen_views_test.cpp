// ag::from_eigen / from_eigen_copy / as_eigen: zero-copy views both ways, layouts, lifetimes, errors.
#include <ag/eigen.h>

#include <thread>

#include "interop_test_util.h"

namespace {

using ag::Tensor;
using RowMajorXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

RowMajorXf counting(int rows, int cols) {
  RowMajorXf m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = static_cast<float>(10 * i + j);
  return m;
}

TEST(EigenViews, RowMajorMatrixIsViewedWithoutACopy) {
  RowMajorXf m = counting(2, 3);
  Tensor t = ag::from_eigen(m);
  EXPECT_EQ(t.data<float>(), m.data());
  EXPECT_TRUE(ag::is_external(t));
  EXPECT_EQ(t.shape(), ag::Shape({2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(t[1].to_vector<float>(), (std::vector<float>{10, 11, 12}));
}

TEST(EigenViews, VectorsOfEitherOrientationAreRankOne) {
  Eigen::VectorXd v(4);
  v << 1, 2, 3, 4;
  Eigen::RowVectorXi r(3);
  r << 7, 8, 9;
  Tensor tv = ag::from_eigen(v), tr = ag::from_eigen(r);
  EXPECT_EQ(tv.shape(), ag::Shape({4}));
  EXPECT_EQ(tv.dtype(), ag::float64);
  EXPECT_EQ(tv.data<double>(), v.data());
  EXPECT_EQ(tr.shape(), ag::Shape({3}));
  EXPECT_EQ(tr.to_vector<int32_t>(), (std::vector<int32_t>{7, 8, 9}));
  Eigen::Array<bool, Eigen::Dynamic, 1> b(3);
  b << true, false, true;
  EXPECT_EQ(ag::logical_not(ag::from_eigen(b)).to_vector<bool>(), (std::vector<bool>{false, true, false}));
}

// A column-major matrix is a compile-time error (eigen.h); its transpose is the zero-copy view.
TEST(EigenViews, TransposeOfAColumnMajorMatrixIsAZeroCopyView) {
  Eigen::MatrixXf c(2, 3);
  c << 1, 2, 3, 4, 5, 6;
  Tensor t = ag::from_eigen(c.transpose());
  EXPECT_EQ(t.data<float>(), c.data());
  EXPECT_EQ(t.shape(), ag::Shape({3, 2}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(t[i][j].item<float>(), c(j, i));
}

TEST(EigenViews, FromEigenCopyTakesAnyLayoutAndExpression) {
  Eigen::MatrixXf c(2, 3);
  c << 1, 2, 3, 4, 5, 6;
  Tensor t = ag::from_eigen_copy(c);
  EXPECT_NE(t.data<float>(), c.data());
  EXPECT_FALSE(ag::is_external(t));
  EXPECT_EQ(t.shape(), ag::Shape({2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ag::from_eigen_copy(c * 2).to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(ag::from_eigen_copy(c.row(1)).to_vector<float>(), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(ag::from_eigen_copy(c.col(2)).to_vector<float>(), (std::vector<float>{3, 6}));
}

TEST(EigenViews, ContiguousBlocksAndMapsAreViewedOthersRejected) {
  RowMajorXf m = counting(3, 4);
  Tensor rows = ag::from_eigen(m.middleRows(1, 2));
  EXPECT_EQ(rows.data<float>(), m.data() + 4);
  EXPECT_EQ(rows.shape(), ag::Shape({2, 4}));
  Tensor flat = ag::from_eigen(Eigen::Map<Eigen::VectorXf>(m.data(), 12));
  EXPECT_EQ(flat.shape(), ag::Shape({12}));
  AG_EXPECT_ERROR(ag::ValueError, ag::from_eigen(m.leftCols(2)), "ag::from_eigen", "3x2", "not contiguous",
                  "from_eigen_copy");
  AG_EXPECT_ERROR(ag::ValueError, ag::from_eigen(m.col(1)), "ag::from_eigen", "not contiguous");
  Eigen::Map<Eigen::VectorXf, 0, Eigen::InnerStride<2>> every_other(m.data(), 6);
  AG_EXPECT_ERROR(ag::ValueError, ag::from_eigen(every_other), "inner stride 2");
  EXPECT_EQ(ag::from_eigen_copy(m.leftCols(2)).to_vector<float>(), (std::vector<float>{0, 1, 10, 11, 20, 21}));
}

TEST(EigenViews, RowMajorEigenTensorsAreViewed) {
  Eigen::Tensor<int64_t, 3, Eigen::RowMajor> e(2, 3, 4);
  for (int64_t i = 0; i < e.size(); ++i) e.data()[i] = i;
  Tensor t = ag::from_eigen(e);
  EXPECT_EQ(t.shape(), ag::Shape({2, 3, 4}));
  EXPECT_EQ(t.data<int64_t>(), e.data());
  EXPECT_EQ(t[1][2][3].item<int64_t>(), e(1, 2, 3));
  Eigen::TensorMap<Eigen::Tensor<int64_t, 2, Eigen::RowMajor>> map(e.data(), 6, 4);
  EXPECT_EQ(ag::from_eigen(map).shape(), ag::Shape({6, 4}));
}

// An rvalue is moved into an owner shared by the tensors: its heap buffer, not a copy. Under
// ASan a read of the buffer after the owner died would be reported; here the tensor outlives
// every Eigen object.
TEST(EigenViews, AnRvalueMatrixIsMovedIntoTheTensor) {
  Tensor t;
  const float* buffer;
  {
    RowMajorXf m = counting(2, 3);
    buffer = m.data();
    t = ag::from_eigen(std::move(m));
    EXPECT_EQ(m.data(), nullptr);  // moved from
  }
  EXPECT_EQ(t.data<float>(), buffer);
  EXPECT_EQ(ag::reduce_sum(t).item<float>(), 0 + 1 + 2 + 10 + 11 + 12);
  Eigen::Tensor<float, 2, Eigen::RowMajor> e(2, 2);
  e.setConstant(1.5f);
  const float* ebuf = e.data();
  Tensor u = ag::from_eigen(std::move(e));
  EXPECT_EQ(u.data<float>(), ebuf);
  EXPECT_EQ(u.to_vector<float>(), (std::vector<float>(4, 1.5f)));
}

TEST(EigenViews, AnOwnerLivesUntilTheLastTensorViewingItDies) {
  auto storage = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6});
  std::weak_ptr<std::vector<float>> alive = storage;
  Tensor t = ag::from_eigen(Eigen::Map<RowMajorXf>(storage->data(), 2, 3), storage);
  storage.reset();
  Tensor view = ag::reshape(t, {6});
  Tensor row = t[1];
  t = Tensor();
  EXPECT_FALSE(alive.expired());
  view = Tensor();
  EXPECT_FALSE(alive.expired());
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{4, 5, 6}));
  // The last view may die on another thread.
  std::thread([r = std::move(row)]() mutable { r = Tensor(); }).join();
  EXPECT_TRUE(alive.expired());
}

TEST(EigenViews, AsEigenViewsATensorsBuffer) {
  Tensor t = ag::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto m = ag::as_eigen<float, 2>(t);
  EXPECT_EQ(m.data(), t.data<float>());
  EXPECT_EQ(m.dimension(0), 2);
  EXPECT_EQ(m(1, 2), 6.f);
  auto mm = ag::as_eigen_matrix<float>(t);
  EXPECT_EQ(mm.data(), t.data<float>());
  EXPECT_EQ(mm(1, 0), 4.f);
  Eigen::Vector3f ones = Eigen::Vector3f::Ones();
  EXPECT_EQ((mm * ones)(1), 15.f);
  Tensor v = ag::constant({1.0, 2.0, 3.0});
  EXPECT_EQ(ag::as_eigen_vector<double>(v).sum(), 6.0);
  Tensor s = Tensor(int64_t{42});
  EXPECT_EQ((ag::as_eigen<int64_t, 0>(s)()), 42);
}

TEST(EigenViews, AsEigenErrorsNameWhatIsWrong) {
  Tensor t = ag::constant({{1.f, 2.f}, {3.f, 4.f}});
  AG_EXPECT_ERROR(ag::TypeError, (ag::as_eigen<double, 2>(t)), "ag::as_eigen", "float32", "float64");
  AG_EXPECT_ERROR(ag::ValueError, (ag::as_eigen<float, 3>(t)), "ag::as_eigen", "rank 2", "[2,2]", "rank 3");
  AG_EXPECT_ERROR(ag::ValueError, ag::as_eigen_vector<float>(t), "ag::as_eigen_vector", "rank 2");
  AG_EXPECT_ERROR(ag::ValueError, ag::as_eigen_matrix<float>(Tensor()), "ag::as_eigen_matrix", "no value");
}

// The map does not own the buffer: it is valid while a tensor holding the buffer lives. Rebinding
// the tensor's name (x = x + 1) makes a new buffer; the old one lives while `keep` does.
TEST(EigenViews, AsEigenIsValidWhileATensorHoldsTheBuffer) {
  Tensor x = ag::from_eigen(counting(64, 64));  // owned by the tensor: freed (ASan-visible) with it
  Tensor keep = x;
  auto before = ag::as_eigen_matrix<float>(x);
  x = x + 1;
  EXPECT_EQ(before(2, 3), 23.f);
  EXPECT_EQ(ag::as_eigen_matrix<float>(x)(2, 3), 24.f);
  EXPECT_EQ(before.data(), keep.data<float>());
}

TEST(EigenViews, EigenMatrixThroughAFunctionAndBackWithoutACopy) {
  RowMajorXf a = counting(3, 4);
  for (agtest::Mode mode : agtest::modes()) {
    SCOPED_TRACE(agtest::mode_name(mode));
    auto gram = ag::function([](Tensor x) { return ag::matmul(x, ag::transpose(x)); }, agtest::options_for(mode));
    Tensor out = gram(ag::from_eigen(a));
    auto g = ag::as_eigen_matrix<float>(out);
    Eigen::MatrixXf expected = a * a.transpose();
    EXPECT_TRUE(g.isApprox(expected)) << g << "\nvs\n" << expected;
    EXPECT_EQ(gram.tracing_count(), 1);
    gram(ag::constant(std::vector<float>(12, 1.f), {3, 4}));  // a plain tensor: the same signature
    EXPECT_EQ(gram.tracing_count(), 1);
  }
}

TEST(EigenViews, SymbolicTensorsHaveNoDataToView) {
  auto f = ag::function([](Tensor x) {
    (void)ag::as_eigen<float, 1>(x);
    return x;
  });
  AG_EXPECT_ERROR(ag::ConversionError, f(ag::constant({1.f})), "ag::as_eigen", "symbolic");
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AG_TEST_ASAN 1
#endif

#ifdef AG_TEST_ASAN
// Proof that ownership ends with the last tensor: the moved-in matrix's buffer is freed then, so
// a read through a map kept past it is a heap-use-after-free that ASan reports.
TEST(EigenViewsDeathTest, TheBufferIsFreedWithTheLastTensor) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        const float* p;
        {
          Tensor t = ag::from_eigen(counting(8, 8));
          p = t.data<float>();
        }
        volatile float x = p[5];
        (void)x;
      },
      "heap-use-after-free");
}
#endif

}  // namespace
