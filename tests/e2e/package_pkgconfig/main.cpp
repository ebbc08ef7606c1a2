// Built without CMake: c++ main.cpp $(pkg-config --cflags --libs agc). The JIT backend must be
// linked (its anchor is in agc.pc) and a Function must run as machine code.
#include <ag/ag.h>

#include <cstdio>

int main() {
  auto f = ag::function([](ag::Tensor x) { return ag::reduce_sum(x * x); });
  float sum = f(ag::range(4.0f)).item<float>();
  bool ok = ag::jit_available() && f.stats().compiles == 1 && sum == 14.0f;
  std::printf("pkg-config consumer: sum %g, JIT linked: %s, compiles: %d\n", sum,
              ag::jit_available() ? "yes" : "no", static_cast<int>(f.stats().compiles));
  return ok ? 0 : 1;
}
