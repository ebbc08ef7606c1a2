// report::write_function_report / write_concrete_report: collect, render, write atomically.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "graph_svg.h"
#include "report_data.h"
#include "report_env.h"
#include "report_html.h"

namespace ag::detail {

void write_report_file(const std::string& path, const std::string& html) {
  // A reader (a browser reloading the page) never sees half a page; two writers of one path
  // (threads of this process, or processes) each write their own temporary file.
  static std::atomic<uint64_t> writes{0};
  const std::string tmp = fmt::format("{}.tmp{}.{}", path, getpid(), writes.fetch_add(1));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(fmt::format("report_html: cannot write '{}': {}", path, std::strerror(errno)));
  const bool written = std::fwrite(html.data(), 1, html.size(), f) == html.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(tmp.c_str());
    throw Error(fmt::format("report_html: cannot write '{}': {}", path, std::strerror(written ? errno : saved)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw Error(fmt::format("report_html: cannot write '{}': {}", path, std::strerror(err)));
  }
}

namespace report {

void write_function_report(FunctionView& f, const std::string& path, bool compile) {
  const report::FunctionReport r = report::collect_function(f, compile);
  write_report_file(path, report::render_html(r, {report::find_dot()}));
}


void write_concrete_report(ConcreteView& c, const std::string& path) {
  report::FunctionReport r;
  r.name = c.name();
  r.whole_function = false;
  r.concretes.push_back(report::collect_concrete(c));
  write_report_file(path, report::render_html(r, {report::find_dot()}));
}

}  // namespace report
}  // namespace ag::detail
