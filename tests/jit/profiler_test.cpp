// ag::profiler: a profile records each Function's trace, its compile and the JIT's stages, every
// call, every op run eagerly or by the interpreter (with its line), and the user's own spans; the
// file is a Chrome trace (its structure is checked here, and in headless Chromium by
// profile_browser_check). Off, the cached call's fast path runs (no events).
#include <fstream>
#include <regex>
#include <sstream>

#include "ag/profiler.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The events' names in the trace text, in order.
std::vector<std::string> names(const std::string& json) {
  std::vector<std::string> out;
  static const std::regex name(R"re("name": "((?:[^"\\]|\\.)*)", "cat")re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), name); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& prefix) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

Tensor halve_until_small(Tensor x) {
  ag::while_stmt([&] { return ag::reduce_sum(x) > 1.f; }, [&] { x = x * 0.5f; }, ag::state(x), {"x"},
                 AG_SOURCE_LOC("profiler_test.cpp", 1));
  return x;
}

TEST(Profiler, RecordsTracesCompilesCallsAndOps) {
  // Per process: ctest runs this binary at two CPU levels at once (jit.cpu_*).
  const std::string path = testing::TempDir() + "/agc_profile." + std::to_string(::getpid()) + ".json";
  auto jit = ag::function(halve_until_small, {.name = "halve"});
  auto interp = ag::function(halve_until_small, {.jit_compile = false, .name = "halve"});
  const Tensor x = ag::constant({8.f, 8.f});
  ag::profiler::start(path);
  EXPECT_TRUE(ag::profiler::is_active());
  EXPECT_THROW(ag::profiler::start(path), ag::ValueError);
  for (int i = 0; i < 3; ++i) jit(x);
  auto dense = ag::function([](Tensor a, Tensor w) { return ag::tanh(ag::matmul(a, w)) + 1.f; }, {.name = "dense"});
  dense(ag::ones({4, 8}), ag::ones({8, 8}));
  interp(x);
  int line = 0;
  {
    ag::profiler::Trace span("my step");
    line = __LINE__ + 1;
    (void)ag::exp(x);
  }
  EXPECT_EQ(ag::profiler::stop(), path);
  EXPECT_FALSE(ag::profiler::is_active());
  EXPECT_EQ(ag::profiler::stop(), "");
  const std::string json = read(path);
  ASSERT_EQ(json.rfind("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", 0), 0u) << json.substr(0, 200);
  const std::vector<std::string> events = names(json);
  EXPECT_TRUE(has(events, "trace halve(")) << json;
  EXPECT_TRUE(has(events, "compile halve(")) << json;
  EXPECT_TRUE(has(events, "jit: plan ")) << json;
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const std::string& s) { return s.rfind("halve(arg0: TensorSpec", 0) == 0; }),
            4) << json;  // three compiled calls and one interpreted
  EXPECT_TRUE(has(events, "my step"));
  // The interpreter's ops and the eager exp, with their lines.
  EXPECT_NE(json.find(R"("name": "ag::reduce_sum", "cat": "op")"), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\": \"ag::exp\", \"cat\": \"op\""), std::string::npos);
  EXPECT_NE(json.find("\"line\": \"profiler_test.cpp:" + std::to_string(line) + "\""), std::string::npos) << json;
  // Code compiled while the profile ran reports its loop nests and products, with their lines.
  EXPECT_NE(json.find(R"("name": "ag::matmul", "cat": "compiled")"), std::string::npos) << json;
  // The HTML report shows each node's time in the profile, for compiled code and the interpreter.
  const std::string page = testing::TempDir() + "/agc_profile_dense." + std::to_string(::getpid()) + ".html";
  dense.report_html(page);
  const std::string html = read(page);
  ASSERT_NE(html.find("Time per node (the latest profile)"), std::string::npos);
  const size_t times = html.find("Time per node");
  EXPECT_NE(html.find("ag::matmul", times), std::string::npos);
  interp.report_html(page);
  EXPECT_NE(read(page).find("Time per node (the latest profile)"), std::string::npos);
  // Stopped: nothing more is recorded.
  jit(x);
  EXPECT_EQ(read(path), json);
}

}  // namespace
