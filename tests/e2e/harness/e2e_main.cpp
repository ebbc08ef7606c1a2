// Runs every corpus case. `original`: the corpus compiled as written (plain C++ on concrete
// tensors) prints its results. `rewritten`: the corpus compiled from ag-rewrite's output runs
// each case eagerly, with the interpreter and with the JIT, fails unless all three agree, and
// prints the eager results; CTest then compares the two printouts.
#include <cstdio>
#include <cstring>

#include "e2e.h"

namespace e2e {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

std::string show(const ag::Tensor& t) {
  std::string out = std::string(ag::dtype_name(t.dtype())) + t.shape().str() + "{";
  const std::vector<double> values = t.to_vector<double>();
  for (size_t i = 0; i < values.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.5g", values[i]);
    out += (i ? " " : "") + std::string(buf);
  }
  return out + "}";
}

}  // namespace e2e

int main(int argc, char** argv) {
  const bool all_modes = argc > 1 && std::strcmp(argv[1], "--all-modes") == 0;
  int failures = 0;
  for (const e2e::Case& c : e2e::registry()) {
    std::string eager, interpreted, jitted;
    try {
      eager = c.run(e2e::Mode::Eager);
      if (all_modes) {
        interpreted = c.run(e2e::Mode::Interpreter);
        jitted = c.run(e2e::Mode::Jit);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAILED %s: %s\n", c.name.c_str(), e.what());
      ++failures;
      continue;
    }
    if (all_modes && (interpreted != eager || jitted != eager)) {
      std::fprintf(stderr, "MISMATCH %s: eager %s, interpreter %s, jit %s\n", c.name.c_str(), eager.c_str(),
                   interpreted.c_str(), jitted.c_str());
      ++failures;
    }
    std::printf("%s = %s\n", c.name.c_str(), eager.c_str());
  }
  std::fprintf(stderr, "%zu cases, %d failed\n", e2e::registry().size(), failures);
  return failures == 0 ? 0 : 1;
}
