// Linked with agc::distribute: alone it is one process; under mpirun every process adds its
// rank + 1 in a compiled all-reduce (2 processes: 1 + 2 = 3).
#include <ag/ag.h>

int main() {
  ag::distribute::init();
  auto total = ag::function([](ag::Tensor x) { return ag::distribute::all_reduce(x); });
  const int sum = total(ag::Tensor(ag::distribute::rank() + 1)).item<int32_t>();
  if (ag::distribute::rank() == 0)
    fmt::print("distribute consumer: {} process(es), sum {}, compiles: {}\n", ag::distribute::world_size(), sum,
               total.stats().compiles);
  return 0;
}
