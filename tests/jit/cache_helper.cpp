// Helper process for the disk-cache tests: calls one function with a signature chosen by argv[1]
// (and argv[2] - 1 more signatures after it) and prints its stats and the last result. It references nothing from libag_jit: the JIT backend is there
// only because linking agc::jit keeps its self-registering object.
#include <ag/ag.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int variant = argc > 1 ? std::atoi(argv[1]) : 1;
  const int signatures = argc > 2 ? std::atoi(argv[2]) : 1;  // variants variant .. variant + signatures - 1
  if (!ag::compiler_backend()) {
    std::printf("no backend\n");
    return 2;
  }
  auto f = ag::function([](ag::Tensor x) { return ag::reduce_sum(ag::tanh(x * 2.0f) + ag::relu(x - 1.0f)) * 3.0f; },
                        {.name = "cache_helper"});
  float y = 0;
  for (int v = variant; v < variant + signatures; ++v) {
    const ag::Tensor x = ag::range(ag::Tensor(0.0f), ag::Tensor(static_cast<float>(v + 2)), ag::Tensor(0.5f));
    y = f(x).item<float>();
  }
  const ag::FunctionStats s = f.stats();
  std::printf("compiles=%lld disk_hits=%lld value=%.6g\n", static_cast<long long>(s.compiles),
              static_cast<long long>(s.disk_hits), static_cast<double>(y));
  return 0;
}
