// Random Eigen matrices for the bench apps' baselines, and the same data as an agc tensor.
#pragma once

#include <ag/ag.h>

#include <Eigen/Core>
#include <cstdlib>
#include <vector>

namespace agbench {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// rows x cols values uniform in [-scale/2, scale/2), from std::rand seeded with `seed`.
inline RowMajorMatrix random_matrix(int64_t rows, int64_t cols, float scale, unsigned seed) {
  std::srand(seed);
  RowMajorMatrix m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = scale * (static_cast<float>(std::rand()) / static_cast<float>(RAND_MAX) - 0.5f);
  return m;
}

inline ag::Tensor tensor_of(const RowMajorMatrix& m) {
  return ag::constant(std::vector<float>(m.data(), m.data() + m.size()), {m.rows(), m.cols()});
}

}  // namespace agbench
