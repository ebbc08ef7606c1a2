// Small helpers of the operators: plain-loop flags and trace statistics.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ag/operators/control_flow.h"
#include "ag/operators/functional.h"
#include "state_vars.h"

namespace ag {

bool loop_flag(const Tensor& keep_going, SourceLoc loc, const char* why_plain) {
  if (keep_going.is_symbolic()) {
    if (why_plain)
      throw ConversionError(fmt::format(
          "a tensor-dependent break or return inside a plain C++ loop{}: the loop runs while tracing and cannot stop "
          "on a tensor's value, and it could not be staged because {}",
          detail::where(loc), why_plain));
    throw ConversionError(fmt::format(
        "a tensor-dependent break or return inside a plain C++ loop{}: the loop's own condition is a C++ value, so "
        "the loop runs while tracing and cannot stop on a tensor's value; make the loop a tensor loop (a tensor "
        "condition, or a range-for over ag::range / a tensor)",
        detail::where(loc)));
  }
  return detail::truth(keep_going, "loop", loc);
}

namespace detail {
bool tracing() { return is_tracing(); }

const char* loop_var_name(size_t i) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int k = 0; k < 64; ++k) v.push_back(fmt::format("loop_vars[{}]", k));
    return v;
  }();
  return i < names.size() ? names[i].c_str() : "loop_vars[...]";
}
void check_autograph(const char* construct, SourceLoc loc) {
  const TraceFrame* f = current_frame();
  if (!f || f->root->autograph) [[likely]]
    return;
  throw ConversionError(fmt::format(
      "Function '{}' has autograph = false, so its body runs as plain C++ would: the tensor-dependent {}{} has a "
      "condition with no value at trace time, which plain C++ cannot branch on. Use ag::cond / ag::while_loop there, "
      "or leave FunctionOptions::autograph on",
      f->root->function_name ? *f->root->function_name : std::string("function"), construct, where(loc)));
}

void note_unrolled_iteration() {
  if (TraceFrame* f = current_frame()) ++f->root->unrolled_iterations;
}
}  // namespace detail

}  // namespace ag
