// W5c: a second Function of the same kernels (a Function created again, as a program that builds
// its model twice does, or a second signature): its first call in a warm process with no disk
// cache, while the first Function lives, against the same with AG_JIT_SHARE_KERNELS=0, which
// compiles every kernel again. The workloads: W5's power (one 10x10 int32 kernel on the calling
// thread's critical path) and W5b's 40 dense layers (kernels and loop nests apart).
#include "shared_kernel_rows.h"

#include <cstdio>
#include <cstdlib>

#include "ag/ag.h"
#include "table.h"
#include "workloads.h"

namespace bench {

using namespace table;

namespace {

// The best of 5 first calls of a second Function, sharing and not, alternated.
template <class F, class... Args>
void second_function_rows(const char* workload, F fn, const Args&... args) {
  auto first = ag::function(fn);
  keep(first(args...));
  double shared = 1e300, alone = 1e300;
  auto time_second = [&] {
    auto second = ag::function(fn);
    const auto t0 = Clock::now();
    keep(second(args...));
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  };
  for (int rep = 0; rep < 5; ++rep) {
    ::unsetenv("AG_JIT_SHARE_KERNELS");
    shared = std::min(shared, time_second());
    ::setenv("AG_JIT_SHARE_KERNELS", "0", 1);
    alone = std::min(alone, time_second());
  }
  ::unsetenv("AG_JIT_SHARE_KERNELS");
  row(workload, "second Function's first call, kernels shared", shared, ratio_str(shared / alone, "compiled again"));
  row(workload, "the same, every kernel compiled again (AG_JIT_SHARE_KERNELS=0)", alone);
}

}  // namespace

void shared_kernel_rows() {
  ::setenv("AG_CACHE_DIR", "off", 1);
  const ag::Tensor p = ag::random_uniform({10, 10}, ag::int32, -2, 3, 1);
  second_function_rows("W5c second Function: power (100 chained 10x10 int32 matmuls)", bench::power, p);
  const ag::Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 1);
  const ag::Tensor w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 2);
  const ag::Tensor b = ag::random_uniform({32}, ag::float32, -0.1, 0.1, 3);
  second_function_rows("W5c second Function: 40 dense layers (W5b's graph)", bench::dense_stack, x, w, b);
}

}  // namespace bench
