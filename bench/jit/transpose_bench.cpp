// Transposes in compiled code (issue 39: a [4096,32] float32 transpose took 137 us compiled), each
// against Eigen's transpose into a preallocated row-major matrix in the same run, one thread.
//   build/bench/jit/transpose_bench
#include <ag/ag.h>

#include <Eigen/Dense>

#include "bench_util.h"

namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
agbench::Row transpose_row(int64_t rows, int64_t cols) {
  const ag::DType d = std::is_same_v<T, float> ? ag::float32 : ag::float64;
  const ag::Tensor x = ag::random_uniform({rows, cols}, d, -1, 1, 7);
  auto f = ag::function([](ag::Tensor x) { return ag::transpose(x, {1, 0}); });
  f(x);  // compiles
  const double agc = agbench::time_per_call([&] { agbench::keep(f(x)); });
  Mat<T> a = Mat<T>::Random(rows, cols), t(cols, rows);
  const double eigen = agbench::time_per_call([&] {
    t.noalias() = a.transpose();
    agbench::keep(t.data());
  });
  return {fmt::format("transpose [{},{}] {}", rows, cols, ag::dtype_name(d)), agbench::us(agc), agbench::us(eigen) + " Eigen",
          fmt::format("{:.2f}x", agc / eigen), ""};
}

}  // namespace

int main() {
  ag::set_num_threads(1);
  Eigen::setNbThreads(1);
  agbench::print_table("Transposes in compiled code, one thread (the agc row allocates its output)",
                       {transpose_row<float>(4096, 32), transpose_row<double>(100000, 8), transpose_row<float>(1024, 1024),
                        transpose_row<float>(32, 4096)});
  return 0;
}
