// Small helpers of the operators: plain-loop flags and trace statistics.
#include <fmt/format.h>

#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ag/detail/log.h"

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

void note_unrolled_loop(int64_t iterations, SourceLoc loc) noexcept {
  TraceFrame* f = current_frame();
  if (!f) return;
  f->root->unrolled_iterations += iterations;
  if (iterations < kWarnUnrolledIterations) return;
  // Once per loop: a Function traced for many signatures would repeat it.
  static std::mutex mutex;
  static std::set<std::pair<std::string, uint32_t>> warned;
  try {
    {
      std::lock_guard lock(mutex);
      if (!warned.emplace(loc.file ? loc.file : "", loc.line).second) return;
    }
    log_line(fmt::format(
        "agc: warning: {}the loop{} ran {} iterations while tracing, each one's ops copied into the graph: its "
        "condition (or what it iterates) was a concrete tensor, a constant while tracing. To trace it once as a "
        "staged loop, make it depend on a traced value (a tensor argument, ag::shape_of(x)); to unroll it on "
        "purpose, loop over a C++ int",
        f->root->function_name ? fmt::format("Function '{}': ", *f->root->function_name) : std::string(), where(loc),
        iterations));
  } catch (...) {  // a warning is never worth an exception out of a loop's end
  }
}
}  // namespace detail

}  // namespace ag
