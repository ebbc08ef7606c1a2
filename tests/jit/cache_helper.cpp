// Helper process for the disk-cache tests: calls one function with a signature chosen by argv[1]
// and prints its stats and result. It references nothing from libag_jit: the JIT backend is there
// only because linking agc::jit keeps its self-registering object.
#include <ag/ag.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int variant = argc > 1 ? std::atoi(argv[1]) : 1;
  if (!ag::compiler_backend()) {
    std::printf("no backend\n");
    return 2;
  }
  auto f = ag::function([](ag::Tensor x) { return ag::reduce_sum(ag::tanh(x * 2.0f) + ag::relu(x - 1.0f)) * 3.0f; },
                        {.name = "cache_helper"});
  const ag::Tensor x = ag::range(ag::Tensor(0.0f), ag::Tensor(static_cast<float>(variant + 2)), ag::Tensor(0.5f));
  const float y = f(x).item<float>();
  const ag::FunctionStats s = f.stats();
  std::printf("compiles=%lld disk_hits=%lld value=%.6g\n", static_cast<long long>(s.compiles),
              static_cast<long long>(s.disk_hits), static_cast<double>(y));
  return 0;
}
