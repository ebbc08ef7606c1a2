// ag::profiler: events recorded in memory while a profile runs, written at stop() as a Chrome
// trace ({"traceEvents": [...]}, times in microseconds from start()).
#include "ag/profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <fstream>
#include <mutex>
#include <vector>

#include "ag/detail/call_hooks.h"
#include "ag/detail/log.h"
#include "ag/detail/profiler.h"

namespace ag::detail {
namespace {

struct Event {
  const char* category;
  std::string name;
  int64_t begin_ns, end_ns;  // since the profile started
  uint32_t thread;
  SourceLoc loc;
};

struct Profile {
  std::mutex mu;
  std::string path;
  ProfileClock::time_point origin;
  std::vector<Event> events;
  // Per (graph, node): runs and total time, for the HTML report (kept after stop()).
  std::map<std::pair<const void*, uint32_t>, std::pair<int64_t, ProfileClock::duration>> node_times;
};
Profile& profile() {
  static auto* p = new Profile;  // never destroyed: the exit handler may run after static destructors
  return *p;
}

// Small thread numbers in the order threads first record (Chrome draws one track per tid).
uint32_t thread_number() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t n = next.fetch_add(1);
  return n;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  return out + "\"";
}

std::string trace_json(const std::vector<Event>& events) {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += R"(  {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "agc"}})";
  for (const Event& e : events) {
    out += fmt::format(",\n  {{\"name\": {}, \"cat\": \"{}\", \"ph\": \"X\", \"ts\": {:.3f}, \"dur\": {:.3f}, \"pid\": 1, "
                       "\"tid\": {}",
                       json_string(e.name), e.category, static_cast<double>(e.begin_ns) / 1e3,
                       static_cast<double>(e.end_ns - e.begin_ns) / 1e3, e.thread);
    if (e.loc.known()) out += fmt::format(", \"args\": {{\"line\": {}}}", json_string(e.loc.str()));
    out += "}";
  }
  return out + "\n]}\n";
}

void stop_at_exit() {
  try {
    ag::profiler::stop();
  } catch (const std::exception& e) {
    log_line(fmt::format("agc: warning: AG_PROFILE: {}", e.what()));
  }
}

}  // namespace

void profile_event(const char* category, std::string name, ProfileClock::time_point begin, ProfileClock::time_point end,
                   SourceLoc loc) {
  Profile& p = profile();
  const uint32_t thread = thread_number();
  std::lock_guard lock(p.mu);
  if (!profiling()) return;  // stopped meanwhile
  p.events.push_back({category, std::move(name), std::chrono::duration_cast<std::chrono::nanoseconds>(begin - p.origin).count(),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(end - p.origin).count(), thread, loc});
}

void profile_node_time(const void* graph, uint32_t node, ProfileClock::duration took) {
  Profile& p = profile();
  std::lock_guard lock(p.mu);
  if (!profiling()) return;
  auto& [runs, total] = p.node_times[{graph, node}];
  ++runs;
  total += took;
}

std::vector<NodeTime> profiled_node_times(const void* graph) {
  Profile& p = profile();
  std::lock_guard lock(p.mu);
  std::vector<NodeTime> out;
  for (auto it = p.node_times.lower_bound({graph, 0}); it != p.node_times.end() && it->first.first == graph; ++it)
    out.push_back({it->first.second, it->second.first,
                   std::chrono::duration<double, std::milli>(it->second.second).count()});
  std::sort(out.begin(), out.end(), [](const NodeTime& a, const NodeTime& b) { return a.total_ms > b.total_ms; });
  return out;
}

void profiler_env_start() {
  static const bool started = [] {
    const char* path = std::getenv("AG_PROFILE");
    if (!path || !*path || ag::profiler::is_active()) return false;
    ag::profiler::start(path);
    std::atexit(stop_at_exit);
    return true;
  }();
  (void)started;
}

}  // namespace ag::detail

namespace ag::profiler {

void start(std::string path) {
  detail::Profile& p = detail::profile();
  std::lock_guard lock(p.mu);
  if (detail::profiling())
    throw ValueError(fmt::format("ag::profiler::start(\"{}\"): a profile is already running (into '{}'); stop() it first",
                                 path, p.path));
  if (path.empty()) throw ValueError("ag::profiler::start: the path is empty");
  p.path = std::move(path);
  p.events.clear();
  p.node_times.clear();
  p.origin = detail::ProfileClock::now();
  detail::set_call_hook(detail::CallHook::Profiling, true);
}

std::string stop() {
  detail::Profile& p = detail::profile();
  std::vector<detail::Event> events;
  std::string path;
  {
    std::lock_guard lock(p.mu);
    if (!detail::profiling()) return {};
    detail::set_call_hook(detail::CallHook::Profiling, false);
    events.swap(p.events);
    path.swap(p.path);
  }
  std::ofstream out(path, std::ios::binary);
  out << detail::trace_json(events);
  if (!out.flush()) throw Error(fmt::format("ag::profiler::stop: cannot write the profile '{}'", path));
  return path;
}

bool is_active() { return detail::profiling(); }

Trace::Trace(std::string name) : name_(std::move(name)) {
  if (detail::profiling())
    begin_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(detail::ProfileClock::now().time_since_epoch()).count();
}

Trace::~Trace() {
  if (begin_ns_ < 0) return;
  const detail::ProfileClock::time_point begin{std::chrono::nanoseconds(begin_ns_)};
  detail::profile_event("user", std::move(name_), begin, detail::ProfileClock::now());
}

}  // namespace ag::profiler
