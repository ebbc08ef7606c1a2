// Runs Graphviz for the report and links the nodes of the SVG it draws.
#include "graph_svg.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

extern char** environ;

namespace ag::detail::report {
namespace {

// A temporary file removed when this goes out of scope.
struct TempFile {
  std::string path;
  explicit TempFile(const char* suffix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "agc-report-XXXXXX").string() + suffix;
    const int fd = mkstemps(tmpl.data(), static_cast<int>(std::string_view(suffix).size()));
    if (fd >= 0) {
      close(fd);
      path = tmpl;
    }
  }
  ~TempFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

bool is_graph_node(std::string_view title) {
  return !title.empty() && title[0] == 'n' && !title.ends_with("ret");
}

}  // namespace

std::string find_dot() {
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::string_view dirs(path);
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    const std::string candidate = dir + "/dot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::string run_dot(const std::string& dot, const std::string& dot_text, std::string& error) {
  TempFile in(".dot"), out(".svg");
  if (in.path.empty() || out.path.empty()) {
    error = "cannot create a temporary file for dot";
    return {};
  }
  std::ofstream(in.path) << dot_text;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const std::string o = "-o" + out.path;
  const char* argv[] = {dot.c_str(), "-Tsvg", o.c_str(), in.path.c_str(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, dot.c_str(), &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = fmt::format("cannot run {}: {}", dot, std::strerror(rc));
    return {};
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = fmt::format("{} -Tsvg failed (status {})", dot, status);
    return {};
  }
  std::stringstream svg;
  svg << std::ifstream(out.path).rdbuf();
  std::string text = svg.str();
  const size_t start = text.find("<svg");
  if (start == std::string::npos) {
    error = dot + " -Tsvg wrote no <svg>";
    return {};
  }
  return text.substr(start);
}

std::string link_svg_nodes(const std::string& svg, const std::string& prefix) {
  static constexpr std::string_view kOpen = "<g id=\"node", kClass = "class=\"node\">", kTitle = "<title>",
                                    kTitleEnd = "</title>", kEnd = "</g>";
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t g = svg.find(kOpen, pos);
    if (g == std::string::npos) break;
    const size_t cls = svg.find(kClass, g);
    const size_t t = svg.find(kTitle, g);
    const size_t te = t == std::string::npos ? t : svg.find(kTitleEnd, t);
    const size_t end = te == std::string::npos ? te : svg.find(kEnd, te);
    if (cls == std::string::npos || end == std::string::npos || cls > t) break;
    const std::string title = svg.substr(t + kTitle.size(), te - t - kTitle.size());
    out.append(svg, pos, g - pos);
    if (!is_graph_node(title)) {
      out.append(svg, g, end + kEnd.size() - g);
    } else {
      out += fmt::format("<g id=\"{}-{}\" class=\"node ag-node\">", prefix, title);
      out.append(svg, cls + kClass.size(), te + kTitleEnd.size() - cls - kClass.size());
      out += fmt::format("<a href=\"#{}-row-{}\">", prefix, title);
      out.append(svg, te + kTitleEnd.size(), end - te - kTitleEnd.size());
      out += "</a></g>";
    }
    pos = end + kEnd.size();
  }
  out.append(svg, pos, std::string::npos);
  return out;
}

}  // namespace ag::detail::report
