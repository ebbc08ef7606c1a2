// GEMM kernels for large or dynamically shaped matmuls in JIT code: Eigen's blocked product, the
// same code the eager kernel runs.
#include <Eigen/Core>

#include "abi.h"

namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n) {
  Eigen::Map<Mat<T>> C(c, m, n);
  if (k == 0) {
    C.setZero();
    return;
  }
  C.noalias() = Eigen::Map<const Mat<T>>(a, m, k) * Eigen::Map<const Mat<T>>(b, k, n);
}

}  // namespace

extern "C" {
void agc_rt_gemm_f32(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) { gemm(a, b, c, m, k, n); }
void agc_rt_gemm_f64(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n) { gemm(a, b, c, m, k, n); }
void agc_rt_gemm_i32(const int32_t* a, const int32_t* b, int32_t* c, int64_t m, int64_t k, int64_t n) { gemm(a, b, c, m, k, n); }
void agc_rt_gemm_i64(const int64_t* a, const int64_t* b, int64_t* c, int64_t m, int64_t k, int64_t n) { gemm(a, b, c, m, k, n); }
}
