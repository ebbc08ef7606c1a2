// Must NOT compile: views from_eigen refuses at compile time, each with its own message. CASE 1: a
// column-major matrix (Eigen's default); 2: an expression with no buffer; 3: a column-major
// Eigen::Tensor; 4: a scalar type with no agc dtype.
#include <ag/eigen.h>

int main() {
#if CASE == 1
  Eigen::MatrixXf m(2, 3);
  ag::Tensor t = ag::from_eigen(m);
#elif CASE == 2
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m(2, 3);
  ag::Tensor t = ag::from_eigen(m * 2);
#elif CASE == 3
  Eigen::Tensor<float, 2> e(2, 3);
  ag::Tensor t = ag::from_eigen(e);
#else
  Eigen::Matrix<uint8_t, Eigen::Dynamic, 1> v(3);
  ag::Tensor t = ag::from_eigen(v);
#endif
  (void)t;
  return 0;
}
