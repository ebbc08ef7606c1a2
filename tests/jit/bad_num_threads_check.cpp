// AG_NUM_THREADS (or AG_POOL_LINGER_US, AG_GEMM_HALVES, AG_LOOP_SPLITS) with a bad value is a ValueError naming
// the variable, raised by the first compile (before compiled code could reach the pool, where no
// error can be raised) and by the first large eager op; nothing crashes. Run with
// AG_NUM_THREADS=lots, and with AG_POOL_LINGER_US=soon, AG_GEMM_HALVES=sometimes or AG_LOOP_SPLITS=maybe, the text to
// find as its argument (tests/jit/CMakeLists.txt).
#include <cstdio>
#include <string>

#include "ag/ag.h"

namespace {

const char* g_expected = "AG_NUM_THREADS=lots";

template <class F>
bool raises_value_error(const char* what, F&& f) {
  try {
    f();
  } catch (const ag::ValueError& e) {
    const bool named = std::string(e.what()).find(g_expected) != std::string::npos;
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

int main(int argc, char** argv) {
  if (argc > 1) g_expected = argv[1];
  const ag::Tensor x = ag::ones({1 << 19});
  auto f = ag::function([](ag::Tensor v) { return ag::exp(v) * 2.f; });
  const bool compiled = raises_value_error("compiled call", [&] { f(x); });
  const bool eager = raises_value_error("eager op", [&] { (void)(x * 3.f); });
  return compiled && eager ? 0 : 1;
}
