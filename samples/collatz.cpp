// Collatz: a while loop on a tensor condition with an if inside, staged as a While node.
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor collatz(Tensor n) {
  Tensor steps = 0;
  while (n > 1) {
    if (n % 2 == 0) n = n / 2;
    else n = 3 * n + 1;
    steps += 1;
  }
  return steps;
}

int main() {
  auto f = ag::function(collatz);
  for (int n : {1, 6, 7, 27, 97, 871}) fmt::print("collatz({}) takes {} steps\n", n, f(Tensor(n)).item<int>());
  fmt::print("tracing_count: {}\n", f.tracing_count());
  fmt::print("\n{}", f.get_concrete_function(Tensor(1)).graph_text());
  return 0;
}
// OUT: collatz(1) takes 0 steps
// OUT-NEXT: collatz(6) takes 8 steps
// OUT-NEXT: collatz(7) takes 16 steps
// OUT-NEXT: collatz(27) takes 111 steps
// OUT-NEXT: collatz(97) takes 118 steps
// OUT-NEXT: collatz(871) takes 178 steps
// OUT-NEXT: tracing_count: 1
// OUT: While(
