// A float64 tensor of `shape` with values uniform in [-1, 1) from `seed`: operands for tests
// that compare an op against its definition computed in the test.
#pragma once

#include <ag/ag.h>

#include <random>
#include <vector>

namespace agtest {

inline ag::Tensor random_values(const ag::Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (double& x : v) x = u(rng);
  return ag::constant(v, shape);
}

}  // namespace agtest
