// W4's cached call in a loop, for counting the instructions one call executes
// (call_path_instructions.sh runs it under callgrind twice and takes the difference):
//   cached_call_loop N   makes N cached calls of x + 1 on a 1-element float32 tensor.
#include <cstdio>
#include <cstdlib>

#include "ag/ag.h"
#include "workloads.h"

ag::Tensor sink;

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000;
  auto f = ag::function(bench::trivial);
  const ag::Tensor x = ag::constant({1.0f});
  for (long i = 0; i < n; ++i) sink = f(x);
  std::printf("%ld calls, %s\n", n, f.stats().compiles == 1 ? "compiled" : "NOT compiled");
  return 0;
}
