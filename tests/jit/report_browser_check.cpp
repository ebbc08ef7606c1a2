// The HTML report in a real browser: headless Chromium loads the report of a JIT-compiled
// Function with two signatures, takes a screenshot and dumps the DOM it built; the DOM must draw
// as many graph nodes as each graph has, every source link must name an existing file and a line
// anchor present in the page, and the IR and assembly lines the JIT mapped must link to nodes.
// Exits 77 (ctest: skipped) when Chromium is not installed.   report_browser_check <out-dir>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "../common/find_on_path.h"
#include "ag/ag.h"
#include "graph_svg.h"
#include "report_html.h"

namespace fs = std::filesystem;
using ag::Tensor;

namespace {

Tensor layer(Tensor x, Tensor w, Tensor b) {
  Tensor h = ag::matmul(x, w) + b;
  auto [k, acc] = ag::while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
                                 [](const Tensor& i, const Tensor& a) { return std::tuple{i + 1, ag::tanh(a) * 0.5f}; },
                                 std::tuple{Tensor(0), h});
  (void)k;
  return ag::relu(acc) + ag::exp(b);
}

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  failures += !ok;
}


size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

std::string section(const std::string& dom, const std::string& id) {
  const size_t b = dom.find("id=\"" + id + "\" data-nodes=");
  if (b == std::string::npos) return {};
  return dom.substr(b, dom.find("</section>", b) - b);
}

}  // namespace

int main(int argc, char** argv) {
  // Built through ccache with a base_dir, __FILE__ is relative to the build directory: the
  // report finds this file through its registration (AG_THIS_SOURCE: tests/jit/CMakeLists.txt).
  ag::detail::register_source_file(AG_THIS_SOURCE, "");
  const std::string chromium = agtest::find_on_path("chromium");
  if (chromium.empty()) {
    std::printf("SKIPPED: chromium is not installed (./test.sh installs the Debian package chromium)\n");
    return 77;
  }
  if (ag::detail::report::find_dot().empty()) {
    std::printf("SKIPPED: Graphviz (dot) is not installed (./test.sh installs the Debian package graphviz)\n");
    return 77;
  }
  const fs::path out = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "agc-report-browser";
  fs::remove_all(out);
  fs::create_directories(out);
  const fs::path page = fs::absolute(out / "layer.html");

  auto f = ag::function(layer, {.name = "layer"});
  f(ag::ones({4, 3}), ag::ones({3, 8}), ag::ones({8}));
  f(ag::ones({4, 3}), ag::ones({3, 8}), ag::ones({8}));
  f(ag::ones({16, 3}), ag::ones({3, 8}), ag::ones({8}));
  f.report_html(page.string());

  // --dump-dom prints the DOM after the page's scripts ran; --screenshot draws it.
  const std::string flags = "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "
                            "--no-first-run --user-data-dir=" + (out / "profile").string();
  const std::string url = "file://" + page.string();
  const std::string dump = (out / "dom.html").string(), png = (out / "screenshot.png").string();
  const int rc1 = std::system((chromium + " " + flags + " --dump-dom '" + url + "' > '" + dump + "' 2>/dev/null").c_str());
  const int rc2 = std::system((chromium + " " + flags + " --window-size=1400,1800 --screenshot='" + png + "' '" + url +
                               "' > /dev/null 2>&1").c_str());
  check(rc1 == 0 && rc2 == 0, "chromium ran");
  std::stringstream ds;
  ds << std::ifstream(dump).rdbuf();
  const std::string dom = ds.str();
  check(dom.find("<svg") != std::string::npos, "the DOM has the SVG graphs");
  std::error_code ec;
  check(fs::file_size(png, ec) > 20000, "the screenshot " + png + " was drawn");

  const auto concretes = f.concrete_functions();
  check(concretes.size() == 2, "two concrete functions");
  for (size_t k = 0; k < concretes.size(); ++k) {
    const std::string s = section(dom, "s" + std::to_string(k));
    const size_t nodes = ag::detail::report::count_graph_nodes(concretes[k].graph());
    const size_t drawn = count(s, "class=\"node ag-node\""), rows = count(s, "class=\"ag-row\"");
    check(drawn == nodes, "signature " + std::to_string(k) + ": " + std::to_string(drawn) + " nodes drawn, the graph has " +
                              std::to_string(nodes));
    check(rows == nodes, "signature " + std::to_string(k) + ": " + std::to_string(rows) + " rows in the node table");
    check(count(s, "class=\"line mapped\"") > 0, "signature " + std::to_string(k) + ": IR/assembly lines linked to nodes");
  }

  // Every source link: the file exists, and the line anchor it points at is in the page.
  const std::regex link(R"re(class="src-link" data-file="([^"]+)" data-line="(\d+)" href="#([^"]+)")re");
  size_t links = 0;
  bool all_ok = true;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), link); it != std::sregex_iterator(); ++it, ++links) {
    const std::string file = (*it)[1], anchor = (*it)[3];
    if (!fs::exists(file) || dom.find("id=\"" + anchor + "\"") == std::string::npos) {
      std::printf("  broken: %s -> #%s\n", file.c_str(), anchor.c_str());
      all_ok = false;
    }
  }
  check(links > 0 && all_ok, std::to_string(links) + " source links resolve (file exists, anchor in the page)");
  check(dom.find("report_browser_check.cpp") != std::string::npos, "the source file is shown");
  // Mapped lines link to node rows that exist.
  const std::regex mapped(R"re(class="line mapped" id="[^"]+" data-node="[^"]+"><a class="ln" href="#([^"]+)")re");
  size_t mapped_links = 0;
  bool mapped_ok = true;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), mapped); it != std::sregex_iterator(); ++it, ++mapped_links)
    mapped_ok = mapped_ok && dom.find("id=\"" + std::string((*it)[1]) + "\"") != std::string::npos;
  check(mapped_links > 0 && mapped_ok, std::to_string(mapped_links) + " IR/assembly lines link to node rows that exist");
  check(std::regex_search(dom, std::regex(R"re(class="line mapped" id="s0-iropt-L\d+" data-node="n\d+s1_n\d+")re")),
        "optimized IR lines link to nodes inside the While's body");
  std::printf("report: %s\nscreenshot: %s\n", page.c_str(), png.c_str());
  return failures == 0 ? 0 : 1;
}
