// A C++17 project's rewritten source: a tensor `while` and `if` (converted by ag-rewrite, which
// must parse as C++20 although the target says 17). Exits 0 when the Function ran compiled and
// gave the eager answer.
#include <ag/ag.h>

#include <cstdio>

AG_FUNCTION ag::Tensor collatz_steps(ag::Tensor n) {
  ag::Tensor steps = ag::zeros_like(n);
  while (n > 1) {
    if (n % 2 == 0) {
      n = n / 2;
    } else {
      n = 3 * n + 1;
    }
    steps = steps + 1;
  }
  return steps;
}

int main() {
  auto f = ag::function(collatz_steps);
  int traced = f(ag::Tensor(27)).item<int>();
  int eager = collatz_steps(ag::Tensor(27)).item<int>();
  bool compiled = f.stats().compiles == 1;
  std::printf("cxx17 consumer: collatz(27) = %d traced, %d eagerly, compiled: %s\n", traced, eager,
              compiled ? "yes" : "no");
  return traced == 111 && eager == 111 && compiled ? 0 : 1;
}
