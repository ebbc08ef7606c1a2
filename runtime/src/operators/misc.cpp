// Small helpers of the operators: plain-loop flags and trace statistics.
#include <fmt/format.h>

#include "ag/operators/control_flow.h"
#include "state_vars.h"

namespace ag {

bool loop_flag(const Tensor& keep_going, SourceLoc loc) {
  if (keep_going.is_symbolic())
    throw ConversionError(fmt::format(
        "a tensor-dependent break or return inside a plain C++ loop{}: the loop's own condition is a C++ value, so "
        "the loop runs while tracing and cannot stop on a tensor's value; make the loop a tensor loop (a tensor "
        "condition, or a range-for over ag::range / a tensor)",
        detail::where(loc)));
  return detail::truth(keep_going, "loop", loc);
}

namespace detail {
bool tracing() { return is_tracing(); }
void note_unrolled_iteration() {
  if (TraceFrame* f = current_frame()) ++f->root->unrolled_iterations;
}
}  // namespace detail

}  // namespace ag
