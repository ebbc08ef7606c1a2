// AG_REPORT: the live Functions, their report files, and the writes at destruction and exit.
#include "report_env.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "ag/detail/function_inspection.h"
#include "ag/detail/log.h"

namespace ag::detail {
namespace {

struct Tracked {
  std::mutex mu;
  std::map<FunctionView*, std::string> paths;  // live Functions -> their report file
  std::set<std::string> used;                  // file names given out (two Functions may share a name)
  bool exited = false;                         // the exit handler ran: later destructors write nothing
};
Tracked& tracked() {
  static auto* t = new Tracked;  // never destroyed: destructors of static Functions still reach it
  return *t;
}

std::string file_name_for(const std::string& name, std::set<std::string>& used) {
  std::string base;
  for (char c : name) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  std::string file = base + ".html";
  for (int k = 2; used.count(file); ++k) file = fmt::format("{}.{}.html", base, k);
  used.insert(file);
  return report_dir() + "/" + file;
}

void write_logged(FunctionView& f, const std::string& path) {
  if (f.stats().traces == 0) return;  // nothing to show
  try {
    report::write_function_report(f, path, /*compile=*/false);
  } catch (const std::exception& e) {
    log_line(fmt::format("agc: warning: AG_REPORT: the report of Function '{}' was not written: {}", f.name(), e.what()));
  }
}

void write_all_at_exit() {
  Tracked& t = tracked();
  std::lock_guard lock(t.mu);
  for (const auto& [f, path] : t.paths) write_logged(*f, path);
  t.exited = true;
}

}  // namespace

const std::string& report_dir() {
  static const std::string dir = [] {
    const char* e = std::getenv("AG_REPORT");
    return e ? std::string(e) : std::string();
  }();
  return dir;
}

void report_env_track(FunctionView* f) {
  if (report_dir().empty()) return;
  static const bool registered = [] {
    std::error_code ec;
    std::filesystem::create_directories(report_dir(), ec);
    if (ec)
      log_line(fmt::format("agc: warning: AG_REPORT: cannot create the directory '{}': {}", report_dir(), ec.message()));
    return std::atexit(write_all_at_exit) == 0;
  }();
  (void)registered;
  Tracked& t = tracked();
  std::lock_guard lock(t.mu);
  t.paths[f] = file_name_for(f->name(), t.used);
}

void report_env_untrack(FunctionView* f) {
  if (report_dir().empty()) return;
  Tracked& t = tracked();
  std::lock_guard lock(t.mu);
  auto it = t.paths.find(f);
  if (it == t.paths.end()) return;
  if (!t.exited) write_logged(*f, it->second);
  t.paths.erase(it);
}

}  // namespace ag::detail
