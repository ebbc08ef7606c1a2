// W5b of jit_bench (large_graph_rows.cpp): the first call and the steady state of a large graph,
// with rolled loops (the default above Program's loop-nest threshold) and unrolled.
#pragma once

namespace bench {

void large_graph_rows(int reps);

}  // namespace bench
