// Exits while the background compiler of tiered execution is compiling: the exit must wait for
// that compile and end normally, not crash in the JIT's globals. main returns only once the
// compile thread has taken the job (held at the gate for a moment), so the exit overlaps the
// compile for certain. A handler registered before the compiler's runs after it and checks that
// the compile finished.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "ag/ag.h"
#include "function/background_compiler.h"

namespace {

std::atomic<bool> g_taken{false};
ag::Function<ag::Tensor(ag::Tensor)>* g_f = nullptr;  // leaked: read by the last exit handler

void check_after_the_compiler_stopped() {
  const long long compiles = g_f->stats().compiles;
  std::printf("at exit, after the background compiler stopped: compiles = %lld\n", compiles);
  std::fflush(stdout);
  _exit(compiles == 1 ? 0 : 1);
}

}  // namespace

int main() {
  std::atexit(check_after_the_compiler_stopped);
  ag::detail::set_background_compile_gate([] {
    g_taken = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // main returns meanwhile
  });
  g_f = new ag::Function<ag::Tensor(ag::Tensor)>(ag::function(
      [](ag::Tensor x) { return ag::tanh(x) * 3.f + ag::exp(-x); }, {.name = "exit_while_compiling", .tiered = true}));
  const float y = ag::reduce_sum((*g_f)(ag::ones({64}))).item<float>();
  while (!g_taken) std::this_thread::yield();
  std::printf("first call on the interpreter: %.3f; returning from main while the compile runs\n", static_cast<double>(y));
  return 0;
}
