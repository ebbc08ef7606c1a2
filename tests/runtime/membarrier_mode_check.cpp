// In a fresh process, making a Function starts deciding the hazard slots' mode (registering for
// membarrier, 6-20 ms of the kernel's time) in the background, so that no call waits for it:
// the mode is decided without any call of the Function. Before this, the first cached call
// registered and the third call of every new process's first Function stalled for it.
#include <chrono>
#include <cstdio>
#include <thread>

#include "ag/ag.h"
#include "function/hazard_slots.h"

namespace hazard = ag::detail::hazard;

int main() {
  if (hazard::g_mode.load() != -1) {
    std::printf("FAIL: the mode was decided before any Function was made\n");
    return 1;
  }
  auto f = ag::function([](ag::Tensor x) { return x + 1; }, {.jit_compile = false});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (hazard::g_mode.load() == -1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (hazard::g_mode.load() == -1) {
    std::printf("FAIL: the mode is still undecided 20 s after the first Function was made\n");
    return 1;
  }
  // And the calls still run (the first inline hit is the third call).
  for (int i = 0; i < 3; ++i)
    if (f(ag::constant(1.0f)).item<float>() != 2.0f) {
      std::printf("FAIL: a wrong result\n");
      return 1;
    }
  std::printf("the hazard mode was decided in the background: %d\n", hazard::g_mode.load());
  return 0;
}
