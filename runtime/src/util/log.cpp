// Print and log sinks, and AG_LOG parsing.
#include "ag/detail/log.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>

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

unsigned parse_log_env() {
  const char* e = std::getenv("AG_LOG");
  if (!e) return 0;
  unsigned mask = 0;
  std::string s = e;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string word = s.substr(pos, end - pos);
    if (word == "retrace") mask |= 1;
    else if (word == "compile") mask |= 2;
    else if (word == "trace") mask |= 4;
    else if (word == "passes") mask |= 8;
    else if (word == "all") mask |= ~0u;
    pos = end + 1;
  }
  return mask;
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
  std::string text(line);
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
