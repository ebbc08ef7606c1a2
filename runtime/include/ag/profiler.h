// ag::profiler: a Chrome trace of what agc does — every Function call, trace and compile (with
// the JIT's stages), and every op run eagerly or by the graph interpreter, named by its op and
// your line — written as JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open.
// AG_PROFILE=<file> profiles a whole run (from the first Function made to exit). docs/debugging.md.
#pragma once

#include <string>

namespace ag::profiler {

// Starts recording into memory; stop() writes `path`. ValueError when a profile is running.
void start(std::string path);
// Stops recording and writes the trace to the path start() was given; returns the path (empty
// when no profile was running). An ag::Error naming the path when it cannot be written.
std::string stop();
bool is_active();

// A span of your own in the trace (tf.profiler.experimental.Trace): from construction to
// destruction, on this thread; costs one relaxed load when no profile is running.
class Trace {
 public:
  explicit Trace(std::string name);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

 private:
  std::string name_;
  long long begin_ns_ = -1;  // -1: not profiling when it began
};

}  // namespace ag::profiler
