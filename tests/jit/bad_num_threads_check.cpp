// AG_NUM_THREADS with a bad value is a ValueError naming the variable, raised by the first
// compile (before compiled code could reach the pool, where no error can be raised) and by the
// first large eager op; nothing crashes. Run with AG_NUM_THREADS=lots (tests/jit/CMakeLists.txt).
#include <cstdio>
#include <string>

#include "ag/ag.h"

namespace {

template <class F>
bool raises_value_error(const char* what, F&& f) {
  try {
    f();
  } catch (const ag::ValueError& e) {
    const bool named = std::string(e.what()).find("AG_NUM_THREADS=lots") != std::string::npos;
    std::printf("%s: ValueError: %s\n", what, e.what());
    return named;
  } catch (const std::exception& e) {
    std::printf("%s: another error: %s\n", what, e.what());
    return false;
  }
  std::printf("%s: nothing raised\n", what);
  return false;
}

}  // namespace

int main() {
  const ag::Tensor x = ag::ones({1 << 19});
  auto f = ag::function([](ag::Tensor v) { return ag::exp(v) * 2.f; });
  const bool compiled = raises_value_error("compiled call", [&] { f(x); });
  const bool eager = raises_value_error("eager op", [&] { (void)(x * 3.f); });
  return compiled && eager ? 0 : 1;
}
