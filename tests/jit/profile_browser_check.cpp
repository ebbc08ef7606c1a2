// A profile read by a browser: headless Chromium runs JSON.parse on the file ag::profiler wrote
// (embedded in a page as application/json, so it must be strict JSON) and checks the Chrome
// trace's shape — every event complete ("X") with a name, numeric times and a thread — writing
// the counts into the DOM it dumps. Exits 77 (ctest: skipped) without Chromium.
//   profile_browser_check <out-dir>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/find_on_path.h"
#include "ag/ag.h"
#include "ag/profiler.h"

namespace fs = std::filesystem;
using ag::Tensor;

namespace {


Tensor step(Tensor w, Tensor x) { return ag::tanh(ag::matmul(x, w)) * 0.5f + ag::reduce_mean(w); }

}  // namespace

int main(int argc, char** argv) {
  const std::string chromium = agtest::find_on_path("chromium");
  if (chromium.empty()) {
    std::printf("SKIPPED: chromium is not installed (./test.sh installs the Debian package chromium)\n");
    return 77;
  }
  const fs::path out = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "agc-profile-browser";
  fs::remove_all(out);
  fs::create_directories(out);
  const fs::path trace = out / "profile.json";
  ag::profiler::start(trace.string());
  auto f = ag::function(step, {.name = "step \"quoted\"\\"});  // a name the JSON must escape
  for (int i = 0; i < 3; ++i) f(ag::ones({4, 4}), ag::ones({2, 4}));
  (void)ag::exp(ag::ones({3}));
  ag::profiler::stop();

  std::stringstream js;
  js << std::ifstream(trace).rdbuf();
  const fs::path page = fs::absolute(out / "load.html");
  std::ofstream(page) << "<html><body><script type=\"application/json\" id=\"trace\">" << js.str()
                      << "</script><pre id=\"out\">not parsed</pre><script>\n"
                         "const t = JSON.parse(document.getElementById('trace').textContent);\n"
                         "const xs = t.traceEvents.filter(e => e.ph === 'X');\n"
                         "const ok = xs.every(e => typeof e.name === 'string' && typeof e.ts === 'number' &&\n"
                         "                         typeof e.dur === 'number' && e.dur >= 0 && Number.isInteger(e.tid));\n"
                         "const cats = [...new Set(xs.map(e => e.cat))].sort().join(',');\n"
                         "document.getElementById('out').textContent = `events=${xs.length} wellformed=${ok} "
                         "categories=${cats} named=${xs.some(e => e.name.startsWith('trace step \"quoted\"\\\\'))}`;\n"
                         "</script></body></html>\n";
  const std::string flags = "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --user-data-dir=" +
                            (out / "chromium").string();
  const std::string dump = (out / "dom.html").string();
  const int rc = std::system((chromium + " " + flags + " --dump-dom 'file://" + page.string() + "' > '" + dump + "' 2>/dev/null").c_str());
  std::stringstream ds;
  ds << std::ifstream(dump).rdbuf();
  const std::string dom = ds.str();
  const size_t at = dom.find("events=");
  const std::string result = at == std::string::npos ? "(not parsed)" : dom.substr(at, dom.find('<', at) - at);
  std::printf("chromium: %s\n", result.c_str());
  const bool ok = rc == 0 && result.find("wellformed=true") != std::string::npos &&
                  result.find("categories=call,compile,compiled,op,trace") != std::string::npos &&
                  result.find("named=true") != std::string::npos && result.find("events=0 ") == std::string::npos;
  std::printf("%s\n", ok ? "ok: the profile is a Chrome trace" : "FAILED");
  return ok ? 0 : 1;
}
