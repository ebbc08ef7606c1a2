// Helper process for the disk-cache and warm-up tests: calls one function with a signature chosen
// by argv[1] (and argv[2] - 1 more signatures after it) and prints its stats and the last result;
// argv[3], if given, waits that many milliseconds between creating the function and calling it
// (the JIT's warm-up runs meanwhile), with "warm" waits until the warm-up has finished (however
// loaded the machine), or with "exit", returns from main without calling it;
// CACHE_HELPER_JIT=0 makes the function jit_compile = false. It
// references nothing from libag_jit: the JIT backend is there only because linking agc::jit keeps
// its self-registering object.
#include <ag/ag.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>

#include "../../runtime/src/function/background_compiler.h"

int main(int argc, char** argv) {
  const int variant = argc > 1 ? std::atoi(argv[1]) : 1;
  const int signatures = argc > 2 ? std::atoi(argv[2]) : 1;  // variants variant .. variant + signatures - 1
  if (!ag::compiler_backend()) {
    std::printf("no backend\n");
    return 2;
  }
  const char* jit_env = std::getenv("CACHE_HELPER_JIT");
  const bool jit = !(jit_env && std::string_view(jit_env) == "0");
  auto f = ag::function([](ag::Tensor x) { return ag::reduce_sum(ag::tanh(x * 2.0f) + ag::relu(x - 1.0f)) * 3.0f; },
                        {.jit_compile = jit ? std::nullopt : std::optional<bool>(false), .name = "cache_helper"});
  if (argc > 3) {
    if (std::string_view(argv[3]) == "exit") return 0;  // while the warm-up runs
    if (std::string_view(argv[3]) == "warm") ag::detail::wait_for_warm_up();
    else std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[3])));
  }
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
