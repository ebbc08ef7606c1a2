// Interop without copies: an Eigen matrix through a compiled ag::function and back as an Eigen
// map, a column-major matrix viewed through its transpose, and a DLPack round trip.
#include <ag/ag.h>
#include <ag/dlpack.h>
#include <ag/eigen.h>

using ag::Tensor;
using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Tensor normalize_rows(Tensor x) {
  Tensor norms = ag::sqrt(ag::reduce_sum(x * x, 1, /*keepdims=*/true));
  return x / norms;
}

int main() {
  RowMajorMatrix m(2, 3);
  m << 3, 0, 4, 1, 2, 2;
  Tensor x = ag::from_eigen(m);  // views m's buffer: m must outlive x
  fmt::print("from_eigen: shape {}, same buffer as the matrix: {}\n", x.shape().str(), x.data<float>() == m.data());

  auto f = ag::function(normalize_rows, {.name = "normalize_rows"});
  Tensor y = f(x);
  auto back = ag::as_eigen_matrix<float>(y);  // views y's buffer: y must outlive it
  fmt::print("as_eigen_matrix: same buffer as the result: {}\n", back.data() == y.data<float>());
  fmt::print("row norms, computed by Eigen on agc's buffer: {:.4f} {:.4f}\n", back.row(0).norm(), back.row(1).norm());

  // Eigen's default layout is column-major; agc's is row-major. The transpose is a view.
  Eigen::MatrixXf c(2, 3);
  c << 1, 2, 3, 4, 5, 6;
  Tensor ct = ag::from_eigen(c.transpose());
  fmt::print("a column-major 2x3 matrix, viewed as its transpose: shape {}, same buffer: {}\n", ct.shape().str(),
             ct.data<float>() == c.data());
  fmt::print("ag::from_eigen_copy keeps its shape: {}\n", ag::from_eigen_copy(c).shape().str());

  // DLPack: what PyTorch, NumPy and JAX exchange. The DLManagedTensor holds a reference to y.
  DLManagedTensor* dl = ag::to_dlpack(y);
  const DLTensor& d = dl->dl_tensor;
  fmt::print("to_dlpack: ndim {}, shape [{}, {}], float{} on device {} (kDLCPU), same buffer: {}\n", d.ndim, d.shape[0],
             d.shape[1], d.dtype.bits, static_cast<int>(d.device.device_type), d.data == y.data<float>());
  Tensor z = ag::from_dlpack(dl);  // agc owns dl now: its deleter runs when the last view of z dies
  fmt::print("from_dlpack: same buffer again: {}\n{}\n", z.data<float>() == y.data<float>(), z);
  return 0;
}
// OUT: from_eigen: shape [2,3], same buffer as the matrix: true
// OUT-NEXT: as_eigen_matrix: same buffer as the result: true
// OUT-NEXT: row norms, computed by Eigen on agc's buffer: 1.0000 1.0000
// OUT-NEXT: a column-major 2x3 matrix, viewed as its transpose: shape [3,2], same buffer: true
// OUT-NEXT: ag::from_eigen_copy keeps its shape: [2,3]
// OUT-NEXT: to_dlpack: ndim 2, shape [2, 3], float32 on device 1 (kDLCPU), same buffer: true
// OUT-NEXT: from_dlpack: same buffer again: true
// OUT-NEXT: tf.Tensor(
// OUT-NEXT: {{\[\[}}0.6 0. 0.8]
// OUT-NEXT: [0.33333334 0.6666667 0.6666667]], shape=(2, 3), dtype=float32)
