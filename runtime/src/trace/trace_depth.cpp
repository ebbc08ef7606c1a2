// The nesting bound of tracing: a depth limit, and the stack this thread has left (read once
// per thread from pthread_getattr_np: both the main thread and std::threads report theirs).
#include "trace_depth.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "ag/detail/ops_internal.h"
#include "frame.h"

namespace ag::detail {
namespace {

struct StackBounds {
  uintptr_t low = 0;  // the lowest usable address (the stack grows down towards it)
  size_t size = 0;    // 0: unknown, not checked
  bool read = false;
};
constinit thread_local StackBounds t_stack;

const StackBounds& stack_bounds() {
  if (!t_stack.read) {
    t_stack.read = true;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) t_stack = {reinterpret_cast<uintptr_t>(addr), size, true};
      pthread_attr_destroy(&attr);
    }
  }
  return t_stack;
}

// Bytes of stack below the caller's frame (the frame address, not a local's: AddressSanitizer
// may move locals to a heap "fake stack").
size_t stack_left(const StackBounds& b) {
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return here > b.low ? here - b.low : 0;
}

// "the tensor-dependent if at f.cpp:12"
std::string construct_of(const std::string& frame_name, SourceLoc loc) {
  const char* what = frame_name == "then" || frame_name == "else" ? "if" : "loop";
  return fmt::format("the tensor-dependent {}{}", what, loc.known() ? " at " + loc.str() : std::string());
}

int times_nested_in_itself(const TraceFrame* parent, SourceLoc loc) {
  int n = 0;
  for (const TraceFrame* f = parent; f; f = f->parent)
    n += f->loc.known() && loc.known() && f->loc.line == loc.line && std::string_view(f->loc.file) == loc.file;
  return n;
}

}  // namespace

size_t trace_stack_reserve() {
  const StackBounds& b = stack_bounds();
  // An eighth of the stack, at least 64 KB and at most 1 MB: 1 MB of an 8 MB stack.
  return std::clamp<size_t>(b.size / 8, size_t{64} << 10, size_t{1} << 20);
}

void check_trace_depth(const TraceFrame* parent, int depth, const std::string& name, SourceLoc loc) {
  const StackBounds& b = stack_bounds();
  const bool too_deep = depth > kMaxTraceDepth;
  const bool stack_low = b.size != 0 && stack_left(b) < trace_stack_reserve();
  if (!too_deep && !stack_low) [[likely]]
    return;
  const std::string function = parent && parent->root->function_name ? *parent->root->function_name : "a function";
  const int self = times_nested_in_itself(parent, loc);
  const std::string reason =
      too_deep ? fmt::format("staged control flow is nested more than {} deep", kMaxTraceDepth)
               : fmt::format("staged control flow nested {} deep has almost exhausted this thread's stack ({} KB)", depth,
                             b.size >> 10);
  throw ConversionError(fmt::format(
      "{} while tracing '{}' (the innermost: {}{}): a function that calls itself under a tensor-dependent if or "
      "loop never stops recursing while tracing, because tracing stages both branches of an if whatever the "
      "condition's value (TensorFlow raises RecursionError). Write the recursion as a loop on tensors (a while loop "
      "on a tensor condition that updates the values the recursive call would take)",
      reason, function, construct_of(name, loc), self > 0 ? fmt::format(", nested in itself {} times", self) : ""));
}

}  // namespace ag::detail
