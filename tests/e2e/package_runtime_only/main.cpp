// Linked with agc::runtime only: no JIT backend. Checks what a user sees, in this order:
//  1. jit_compile = false: the interpreter, quietly;
//  2. jit_compile unset: the interpreter, and one warning for the whole process (two Functions
//     trace, one warning), which says what happened and how to fix it;
//  3. jit_compile = true: an ag::Error on the first call.
// Prints what it saw; exits 0 only when all of it held.
#include <ag/ag.h>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  std::vector<std::string> log;
  ag::set_log_sink([&](std::string_view line) { log.emplace_back(line); });
  bool ok = !ag::jit_available();
  std::printf("JIT linked: %s\n", ag::jit_available() ? "yes" : "no");

  auto quiet = ag::function([](ag::Tensor x) { return x * 2; }, {.jit_compile = false});
  ok &= quiet(ag::Tensor(21)).item<int>() == 42;
  std::printf("jit_compile = false: %zu log line(s)\n", log.size());
  ok &= log.empty();

  auto first = ag::function([](ag::Tensor x) { return x + 1; }, {.name = "first"});
  auto second = ag::function([](ag::Tensor x) { return x - 1; }, {.name = "second"});
  ok &= first(ag::Tensor(1)).item<int>() == 2 && second(ag::Tensor(1)).item<int>() == 0;
  ok &= first.stats().compiles == 0 && second.stats().compiles == 0;
  std::printf("jit_compile unset, two Functions: %zu log line(s)\n", log.size());
  for (const std::string& line : log) std::printf("  %s\n", line.c_str());
  ok &= log.size() == 1 && log[0].find("no JIT backend is linked") != std::string::npos &&
        log[0].find("'first'") != std::string::npos && log[0].find("agc::agc") != std::string::npos;

  auto required = ag::function([](ag::Tensor x) { return x; }, {.jit_compile = true, .name = "required"});
  try {
    required(ag::Tensor(1));
    std::printf("jit_compile = true: no error\n");
    ok = false;
  } catch (const ag::Error& e) {
    std::printf("jit_compile = true: ag::Error: %s\n", e.what());
    ok &= std::string(e.what()).find("agc::agc") != std::string::npos;
  }
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
