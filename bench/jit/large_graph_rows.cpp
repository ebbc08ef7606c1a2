// W5b: a graph of 40 small dense layers ([8,32] x [32,32], tanh, a row max and a column mean
// each: about 4 loop nests a layer, all in one function). Its first call (trace, optimize, codegen; warm
// process, no disk cache) and its cached call, with AG_JIT_ROLL unset (rolled: outer loops stay
// loops) and AG_JIT_ROLL=0 (LLVM unrolls them), next to eager.
#include "large_graph_rows.h"

#include <cstdio>
#include <cstdlib>

#include "ag/ag.h"
#include "table.h"
#include "workloads.h"

namespace bench {

using namespace table;

namespace {

struct Timed {
  double first_ns = 1e300, call_ns = 0;
};

Timed time_large_graph(const char* roll, int reps, const ag::Tensor& x, const ag::Tensor& w, const ag::Tensor& b) {
  ::setenv("AG_JIT_ROLL", roll, 1);
  Timed t;
  for (int rep = 0; rep < 2; ++rep) {  // each new Function traces and compiles again
    auto f = ag::function(bench::dense_stack);
    const auto t0 = Clock::now();
    keep(f(x, w, b));
    t.first_ns = std::min(t.first_ns, std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    if (rep == 0) t.call_ns = time_ns([&] { keep(f(x, w, b)); }, 2000, reps);
  }
  ::unsetenv("AG_JIT_ROLL");
  return t;
}

}  // namespace

void large_graph_rows(int reps) {
  const ag::Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 1);
  const ag::Tensor w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 2);
  const ag::Tensor b = ag::random_uniform({32}, ag::float32, -0.1, 0.1, 3);
  const Timed rolled = time_large_graph("auto", reps, x, w, b);
  const Timed unrolled = time_large_graph("0", reps, x, w, b);
  const double t_eager = time_ns([&] { keep(bench::dense_stack(x, w, b)); }, 100, reps);
  const char* wl = "W5b large graph: 40 dense layers [8,32] x [32,32] + tanh, row max, column mean";
  row(wl, "first call, rolled loops (the default above 48 loop nests)", rolled.first_ns,
      ratio_str(unrolled.first_ns / rolled.first_ns, "faster than unrolled"));
  row(wl, "first call, unrolled (AG_JIT_ROLL=0)", unrolled.first_ns);
  row(wl, "cached call, rolled loops", rolled.call_ns, ratio_str(rolled.call_ns / unrolled.call_ns, "unrolled's time"));
  row(wl, "cached call, unrolled", unrolled.call_ns);
  row(wl, "eager", t_eager, ratio_str(t_eager / rolled.call_ns, "rolled"));
}

}  // namespace bench
