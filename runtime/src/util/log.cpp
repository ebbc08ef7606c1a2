// Print and log sinks, and AG_LOG parsing.
#include "ag/detail/log.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ag/print.h"

namespace ag {
namespace {

struct Sinks {
  std::mutex mu;
  std::function<void(std::string_view)> print;
  std::function<void(std::string_view)> log;
};
Sinks& sinks() {
  static Sinks* s = new Sinks;  // outlives static destruction: prints may come from anywhere
  return *s;
}

}  // namespace

void set_print_sink(std::function<void(std::string_view)> sink) {
  std::lock_guard lock(sinks().mu);
  sinks().print = std::move(sink);
}

void set_log_sink(std::function<void(std::string_view)> sink) {
  std::lock_guard lock(sinks().mu);
  sinks().log = std::move(sink);
}

namespace detail {
namespace {

// AG_LOG's `time` word: every log line starts with the milliseconds since the runtime was
// loaded, `[+12.34 ms]`, for timelines of a first call (which log line came when, and what the
// gaps between them hold).
std::atomic<bool> g_time_prefix{false};
const auto g_loaded = std::chrono::steady_clock::now();
void enable_time_prefix() { g_time_prefix.store(true, std::memory_order_relaxed); }

}  // namespace

unsigned parse_log_topics(std::string_view spec, std::vector<std::string>* unknown) {
  unsigned mask = 0;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view word = spec.substr(pos, end - pos);
    if (word == "retrace") mask |= static_cast<unsigned>(LogTopic::Retrace);
    else if (word == "compile") mask |= static_cast<unsigned>(LogTopic::Compile);
    else if (word == "trace") mask |= static_cast<unsigned>(LogTopic::Trace);
    else if (word == "passes") mask |= static_cast<unsigned>(LogTopic::Passes);
    else if (word == "kernels") mask |= static_cast<unsigned>(LogTopic::Kernels);
    else if (word == "all") mask |= ~0u;
    else if (word == "time") enable_time_prefix();
    else if (!word.empty() && unknown) unknown->emplace_back(word);
    pos = end + 1;
  }
  return mask;
}

namespace {

// AG_LOG, read once; a word that names no topic is a warning, not silence.
unsigned parse_log_env() {
  const char* e = std::getenv("AG_LOG");
  if (!e) return 0;
  std::vector<std::string> unknown;
  const unsigned mask = parse_log_topics(e, &unknown);
  for (const std::string& word : unknown)
    log_line("agc: warning: AG_LOG: unknown topic '" + word +
             "' (ignored); the topics are retrace, compile, trace, passes, kernels and all, separated by commas "
             "(and `time`, which starts each line with the milliseconds since the runtime was loaded)");
  return mask;
}

std::atomic<unsigned>& topics() {
  static std::atomic<unsigned> mask{parse_log_env()};
  return mask;
}
std::string& dump_dir_storage() {
  static std::string dir = [] {
    const char* e = std::getenv("AG_DUMP");
    return e ? std::string(e) : std::string();
  }();
  return dir;
}
}  // namespace

bool log_enabled(LogTopic topic) { return (topics().load(std::memory_order_relaxed) & static_cast<unsigned>(topic)) != 0; }
void set_log_topics(unsigned mask) { topics().store(mask); }

const std::string& dump_dir() { return dump_dir_storage(); }
void set_dump_dir(std::string dir) {
  if (!dir.empty()) std::filesystem::create_directories(dir);
  dump_dir_storage() = std::move(dir);
}

void log_line(std::string_view line) {
  std::function<void(std::string_view)> sink;
  {
    std::lock_guard lock(sinks().mu);
    sink = sinks().log;
  }
  std::string text;
  if (g_time_prefix.load(std::memory_order_relaxed))
    text = fmt::format("[+{:.2f} ms] ", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_loaded).count());
  text += line;
  text += '\n';
  if (sink) sink(text);
  else std::fwrite(text.data(), 1, text.size(), stderr);
}

void print_line(std::string_view line) {
  std::function<void(std::string_view)> sink;
  {
    std::lock_guard lock(sinks().mu);
    sink = sinks().print;
  }
  if (sink) {
    sink(line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }
}

}  // namespace detail
}  // namespace ag
