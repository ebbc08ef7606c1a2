// FizzBuzz (the guide's tensor for loop): a loop over ag::range with an if / else if / else
// chain. The body and each branch are traced once; ag::print runs on every iteration.
#include <ag/ag.h>

#include <cstdio>

using ag::Tensor;

AG_FUNCTION void fizzbuzz(Tensor n) {
  for (auto i : ag::range(1, n + 1)) {
    std::printf("Tracing for loop\n");
    if (i % 15 == 0) {
      std::printf("Tracing fizzbuzz branch\n");
      ag::print("fizzbuzz");
    } else if (i % 3 == 0) {
      std::printf("Tracing fizz branch\n");
      ag::print("fizz");
    } else if (i % 5 == 0) {
      std::printf("Tracing buzz branch\n");
      ag::print("buzz");
    } else {
      std::printf("Tracing default branch\n");
      ag::print(i);
    }
  }
}

int main() {
  auto f = ag::function(fizzbuzz);
  f(Tensor(5));
  fmt::print("-- again with n = 20 (no tracing)\n");
  f(Tensor(20));
  return 0;
}
// OUT: Tracing for loop
// OUT-NEXT: Tracing fizzbuzz branch
// OUT-NEXT: Tracing fizz branch
// OUT-NEXT: Tracing buzz branch
// OUT-NEXT: Tracing default branch
// OUT-NEXT: 1
// OUT-NEXT: 2
// OUT-NEXT: fizz
// OUT-NEXT: 4
// OUT-NEXT: buzz
// OUT-NEXT: -- again with n = 20 (no tracing)
// OUT-NEXT: 1
// OUT: 14
// OUT-NEXT: fizzbuzz
// OUT: 19
// OUT-NEXT: buzz
