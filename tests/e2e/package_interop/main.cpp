// An Eigen matrix into a Function and back, and a DLPack round trip, from an installed agc.
#include <ag/ag.h>
#include <ag/dlpack.h>
#include <ag/eigen.h>

int main() {
  Eigen::Matrix<double, 2, 2, Eigen::RowMajor> m;
  m << 1, 2, 3, 4;
  auto twice = ag::function([](ag::Tensor x) { return x * 2; });
  ag::Tensor y = twice(ag::from_eigen(m));
  ag::Tensor z = ag::from_dlpack(ag::to_dlpack(y));
  const double sum = ag::as_eigen_matrix<double>(z).sum();
  fmt::print("interop consumer: sum {}, zero-copy round trip: {}\n", sum, z.data<double>() == y.data<double>());
  return sum == 20 ? 0 : 1;
}
