// Runs the rewritten function eagerly and traced; both must give the expected result.
#include <cstdio>

#include "model.h"

int main() {
  auto traced = ag::function(grow);
  const int eager = grow(ag::Tensor(1)).item<int>();
  const int staged = traced(ag::Tensor(1)).item<int>();
  std::printf("grow(1) = %d eagerly, %d traced (%lld trace)\n", eager, staged,
              static_cast<long long>(traced.tracing_count()));
  return eager == 5162 && staged == 5162 && traced.tracing_count() == 1 ? 0 : 1;
}
