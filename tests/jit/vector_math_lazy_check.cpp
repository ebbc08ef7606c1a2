// libmvec (the loop vectorizer's _ZGV* vector math) is opened at the first lookup of one of its
// names (jit/src/engine.cpp, VectorMathGenerator), not when the engine is created: a process
// whose code never calls it does not map it, one whose code does gets the right values. Its own
// process: the test suite's earlier compiles would have opened it. Exit 0 when both hold.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "ag/ag.h"

namespace {

bool libmvec_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libmvec") != std::string::npos) return true;
  return false;
}

}  // namespace

int main() {
  const ag::Tensor x = ag::random_uniform({4096}, ag::float32, -1, 1, 1);
  auto plain = ag::function([](ag::Tensor a) { return a * 2.0f + 1.0f; });
  (void)plain(x);
  if (libmvec_mapped()) {
    std::fprintf(stderr, "libmvec was opened by code that does not call it\n");
    return 1;
  }
  auto with_exp = ag::function([](ag::Tensor a) { return ag::exp(a) + 1.0f; });
  const ag::Tensor y = with_exp(x);
  if (with_exp.get_concrete_function(x).llvm_ir(true).find("_ZGV") == std::string::npos) {
    std::fprintf(stderr, "exp was not vectorized with libmvec: nothing to check\n");
    return 1;
  }
  if (!libmvec_mapped()) {
    std::fprintf(stderr, "code calling libmvec ran without it being opened\n");
    return 1;
  }
  const float* xs = x.data<float>();
  const float* ys = y.data<float>();
  for (int i = 0; i < 4096; ++i)
    if (std::fabs(ys[i] - (std::exp(xs[i]) + 1.0f)) > 1e-5f * (std::exp(xs[i]) + 1.0f)) {
      std::fprintf(stderr, "exp(%g) + 1: %g\n", xs[i], ys[i]);
      return 1;
    }
  return 0;
}
