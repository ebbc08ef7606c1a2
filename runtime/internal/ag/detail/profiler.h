// The recording side of ag::profiler (ag/profiler.h): what agc's own code calls. Every entry
// point first reads profiling(), one relaxed load, so a run without a profile pays nothing else.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ag/detail/call_hooks.h"
#include "ag/error.h"

namespace ag::detail {

// A profile runs: a bit of the call-hook word (call_hooks.h), which also sends Function calls
// off the cached fast path so they are recorded.
inline bool profiling() { return call_hook_on(CallHook::Profiling); }

using ProfileClock = std::chrono::steady_clock;

// A complete event ("ph":"X") of `category` (call, trace, compile, op, user) on this thread.
// `loc`, when known, goes into the event's args as "file:line".
void profile_event(const char* category, std::string name, ProfileClock::time_point begin, ProfileClock::time_point end,
                   SourceLoc loc = {});

// The time node `node` of graph `graph` took (a compiled loop nest, an interpreted op), summed
// per node for the HTML report. Only while profiling; cleared by profiler::start().
void profile_node_time(const void* graph, uint32_t node, ProfileClock::duration took);
struct NodeTime {
  uint32_t node = 0;
  int64_t runs = 0;
  double total_ms = 0;
};
// The nodes of `graph` with times in the latest profile, costliest first.
std::vector<NodeTime> profiled_node_times(const void* graph);

// An event from construction to destruction; the name is built only when profiling.
class ProfileScope {
 public:
  template <class MakeName>
  ProfileScope(const char* category, MakeName&& make_name, SourceLoc loc = {}) {
    if (!profiling()) [[likely]]
      return;
    category_ = category;
    name_ = make_name();
    loc_ = loc;
    begin_ = ProfileClock::now();
  }
  ~ProfileScope() {
    if (category_) profile_event(category_, std::move(name_), begin_, ProfileClock::now(), loc_);
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  const char* category_ = nullptr;  // null: not recording
  std::string name_;
  SourceLoc loc_;
  ProfileClock::time_point begin_;
};

// AG_PROFILE=<file>: starts a profile written at exit, once per process (called where Functions
// are made).
void profiler_env_start();

}  // namespace ag::detail
