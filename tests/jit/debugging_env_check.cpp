// The debugging environment variables, each read where the first Function is made:
//   debugging_env_check check-eager   run with AG_CHECK=eager and AG_JIT_TEST_MISCOMPILE=Tanh: a
//                                     call raises the InternalError naming ag::tanh
//   debugging_env_check profile       run with AG_PROFILE=<file>: the profile is written at exit
//                                     (the test then reads the file: tests/jit/CMakeLists.txt)
#include <cstdio>
#include <cstring>
#include <string>

#include "ag/ag.h"
#include "ag/profiler.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  auto f = ag::function([](ag::Tensor x) { return ag::tanh(x) * 2.f; }, {.name = "env_check"});
  const ag::Tensor x = ag::constant({0.f, 0.5f});
  if (mode == "check-eager") {
    try {
      f(x);
    } catch (const ag::InternalError& e) {
      const bool named = std::strstr(e.what(), "compare_with_eager: ag::tanh") && std::strstr(e.what(), "AG_CHECK=eager");
      std::printf("%s: %s\n", named ? "ok" : "FAILED", e.what());
      return named ? 0 : 1;
    }
    std::printf("FAILED: no error with AG_CHECK=eager and a miscompiled tanh\n");
    return 1;
  }
  if (mode == "profile") {
    for (int i = 0; i < 3; ++i) f(x);
    std::printf("%s\n", ag::profiler::is_active() ? "ok: profiling since the first Function" : "FAILED: not profiling");
    return ag::profiler::is_active() ? 0 : 1;  // the file is written at exit
  }
  std::printf("usage: debugging_env_check check-eager|profile\n");
  return 2;
}
