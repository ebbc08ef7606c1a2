// Staged while loops over a mask, run element by element. NumPy-style code iterates a whole grid
// until the last element is done:
//
//   while (ag::reduce_any(active) & (i < n)) {
//     z = ag::where(active, step(z), z);
//     active = active & keep_going(z);
//     i += 1;
//   }
//
// or with the mask computed in the cond, `while (ag::reduce_any(abs(z) < 2.0f))`, the body
// computing it again for its `where`s; which, staged as written, passes over every element (done
// or not) in every iteration. When the
// body is elementwise, an element that is no longer active is a fixed point of the body, and the
// condition is `reduce_any` of that mask (and'ed with conditions of scalars), each element's
// final state is the one a loop over that element alone reaches: `while (active[e] & (i < n))`.
// The JIT then runs one loop nest over the elements, each running its own loop in registers and
// stopping when it is done (what a C++ programmer writes by hand), and splits that nest over the
// thread pool. Exact, not approximate: the plan is proven from the graph, below.
//
// Plan-time only (plan_program): the graph the Function keeps, and the interpreter, are unchanged.
#pragma once

#include <memory>

#include "ag/graph/graph.h"

namespace ag::jit {

// `g` with each While that qualifies run element by element (its sub-graphs made scalar: see
// per_element_loops.cpp for the rules), or `g` itself when none does. A qualifying While keeps
// its inputs and outputs; Attrs::per_element() marks it, and its cond and body take and return
// one element of each loop variable (scalars stay scalars; invariants are read at the element,
// broadcast).
std::shared_ptr<const Graph> run_loops_per_element(std::shared_ptr<const Graph> g);

}  // namespace ag::jit
