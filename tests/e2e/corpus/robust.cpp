// Corpus: a translation unit with Eigen and much of the standard library, and macros around
// (not inside) converted code.
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

#define AGC_E2E_NAMESPACE_BEGIN namespace robust {
#define AGC_E2E_NAMESPACE_END }
#define AGC_INLINE inline
#define EXPECT_SCALAR(t) static_cast<void>((t).rank())

AGC_E2E_NAMESPACE_BEGIN

// Plain C++ (Eigen, containers) around tensor control flow.
AG_FUNCTION AGC_INLINE Tensor eigen_weighted(Tensor x) {
  Eigen::Vector3f weights(0.5f, 1.5f, 2.0f);
  const std::vector<float> coefficients(weights.data(), weights.data() + weights.size());
  const float total = std::accumulate(coefficients.begin(), coefficients.end(), 0.0f);
  EXPECT_SCALAR(x);
  Tensor y = x;
  if (x > 0) y = x * total;
  else y = x - total;
  std::map<std::string, int> unused{{"a", 1}};
  return y + static_cast<float>(unused.size());
}

AG_FUNCTION Tensor containers_of_tensors(Tensor x) {
  std::vector<Tensor> parts = {x, x * 2, x * 3};
  Tensor total = 0;
  for (const Tensor& p : parts) {  // a C++ container: unrolled while tracing
    if (p > 4) total = total + p;
  }
  return total;
}

AGC_E2E_NAMESPACE_END

using robust::containers_of_tensors;
using robust::eigen_weighted;
AG_E2E(eigen_weighted, std::tuple{2.0f}, std::tuple{-2.0f});
AG_E2E(containers_of_tensors, std::tuple{1}, std::tuple{3});
