// The HTML report without a browser: escaping, every section, one graph per signature, the
// SVG's nodes against the graph, the fallback without Graphviz, history, sources, bad paths.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ag/ag.h"
#include "function/concrete.h"
#include "graph_svg.h"
#include "report_html.h"
#include "text_diff.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using ag::Tensor;

// Where this file is: built through ccache with a base_dir, __FILE__ (and so the nodes' source
// locations) is relative to the build directory, which the report resolves against registered
// originals (tests/runtime/CMakeLists.txt defines AG_THIS_SOURCE).
const bool this_file_registered = ag::detail::register_source_file(AG_THIS_SOURCE, "");

Tensor relu_layer(Tensor x, Tensor w) { return ag::relu(ag::matmul(x, w) + 1.f); }

Tensor count_down(Tensor n) {
  auto [r] = ag::while_loop([](const Tensor& k) { return k > 0; }, [](const Tensor& k) { return k - 1; },
                            std::tuple{n});
  return r;
}

size_t count(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

std::string read(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

// The text between the start of <section id="<id>" and the next section (or the sources).
std::string section(const std::string& html, const std::string& id) {
  const size_t b = html.find("<section class=\"concrete\" id=\"" + id + "\"");
  if (b == std::string::npos) return {};
  const size_t e = html.find("</section>", b);
  return html.substr(b, e - b);
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / fmt::format("agc-report-test-{}", getpid());
  fs::create_directories(d);
  return d;
}

// Sets PATH for one scope (to hide or show Graphviz's dot).
struct ScopedPath {
  std::string saved;
  explicit ScopedPath(const std::string& path) : saved(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() { setenv("PATH", saved.c_str(), 1); }
};

TEST(ReportHtml, EscapesIrAndSourceText) {
  auto f = ag::function(relu_layer, {.jit_compile = false});
  auto c = f.get_concrete_function(ag::TensorSpec({2, 3}, ag::float32), ag::TensorSpec({3, 4}, ag::float32));
  ag::detail::report::FunctionReport r;
  r.name = "a<b>&c";
  ag::detail::report::ConcreteReport cr;
  cr.signature = "f(x: <float> & more)";
  cr.graph = c.core()->graph_ptr();
  cr.backend = "jit";
  cr.ir.text = "define <4 x float> @f(ptr %a) {\n  %x = and i1 %p, %q ; a && b\n}\n";
  cr.ir_opt.text = cr.ir.text;
  cr.assembly.text = "\tvmovaps\t(%rdi), %ymm0 # <spill> & reload\n";
  cr.plan_text = "%3 = Add(%1, %2) [fused, group=<%3>]\n";
  r.concretes.push_back(cr);
  const std::string html = ag::detail::report::render_html(r, {});
  EXPECT_NE(html.find("define &lt;4 x float&gt; @f(ptr %a) {"), std::string::npos);
  EXPECT_NE(html.find("; a &amp;&amp; b"), std::string::npos);
  EXPECT_NE(html.find("# &lt;spill&gt; &amp; reload"), std::string::npos);
  EXPECT_NE(html.find("group=&lt;%3&gt;"), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&gt;&amp;c"), std::string::npos);
  EXPECT_NE(html.find("f(x: &lt;float&gt; &amp; more)"), std::string::npos);
  EXPECT_EQ(html.find("<4 x float>"), std::string::npos);
  EXPECT_EQ(html.find("<spill>"), std::string::npos);
  EXPECT_EQ(html.find("a<b>"), std::string::npos);
  // This file is a source of the graph: its text is escaped too (it contains "<gtest/gtest.h>").
  EXPECT_NE(html.find("#include &lt;gtest/gtest.h&gt;"), std::string::npos);
  EXPECT_EQ(html.find("#include <gtest/gtest.h>"), std::string::npos);
}

TEST(ReportHtml, EverySectionOneGraphPerSignatureAndTheNodeCount) {
  if (ag::detail::report::find_dot().empty()) GTEST_SKIP() << "Graphviz (dot) is not installed: no SVG to check";
  const fs::path dir = temp_dir();
  auto f = ag::function(relu_layer, {.jit_compile = false, .name = "relu_layer"});
  f(ag::ones({2, 3}), ag::ones({3, 4}));
  f(ag::ones({5, 3}), ag::ones({3, 4}));
  f(ag::ones({5, 3}), ag::ones({3, 4}));
  f.report_html((dir / "r.html").string());
  const std::string html = read(dir / "r.html");
  for (const char* piece : {"id=\"summary\"", "Trace history", "id=\"s0\"", "id=\"s1\"", "id=\"sources\"",
                            "The graph after each pass", "runs on the graph interpreter"})
    EXPECT_NE(html.find(piece), std::string::npos) << piece;
  EXPECT_EQ(count(html, "<svg"), 2u);
  EXPECT_EQ(count(html, "<section class=\"concrete\""), 2u);
  EXPECT_EQ(html.find("<script src"), std::string::npos);  // self-contained
  EXPECT_EQ(html.find("<link"), std::string::npos);
  const auto concretes = f.concrete_functions();
  ASSERT_EQ(concretes.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const std::string s = section(html, fmt::format("s{}", k));
    const size_t nodes = ag::detail::report::count_graph_nodes(concretes[k].graph());
    EXPECT_EQ(count(s, "class=\"node ag-node\""), nodes) << "signature " << k;
    EXPECT_EQ(count(s, "class=\"ag-row\""), nodes) << "signature " << k;
    EXPECT_EQ(count(s, "<details class=\"stage\""), 10u);  // traced + the nine passes
  }
  // The stats and the reasons of both traces.
  EXPECT_NE(html.find("<td>2</td><td>0</td><td>1</td>"), std::string::npos);  // traces, compiles, memory hits
  EXPECT_NE(html.find("first trace"), std::string::npos);
  EXPECT_NE(html.find("shape [2,3] -&gt; [5,3]"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportHtml, SubGraphNodesAreDrawnAndListed) {
  if (ag::detail::report::find_dot().empty()) GTEST_SKIP() << "Graphviz (dot) is not installed: no SVG to check";
  auto f = ag::function(count_down, {.jit_compile = false});
  auto c = f.get_concrete_function(Tensor(3));
  ag::detail::report::FunctionReport r;
  r.name = "count_down";
  r.concretes.push_back(ag::detail::report::collect_concrete(*c.core(), false));
  const std::string html = ag::detail::report::render_html(r, {ag::detail::report::find_dot()});
  const size_t nodes = ag::detail::report::count_graph_nodes(c.graph());
  EXPECT_GT(nodes, c.graph().nodes.size());  // the While's cond and body are counted
  EXPECT_EQ(count(html, "class=\"node ag-node\""), nodes);
  EXPECT_EQ(count(html, "class=\"ag-row\""), nodes);
}

TEST(ReportHtml, WithoutGraphvizTheGraphIsTextAndATable) {
  const fs::path dir = temp_dir();
  const fs::path empty = dir / "empty-bin";
  fs::create_directories(empty);
  auto f = ag::function(relu_layer, {.jit_compile = false});
  f(ag::ones({2, 3}), ag::ones({3, 4}));
  {
    ScopedPath hide(empty.string());
    ASSERT_EQ(ag::detail::report::find_dot(), "");
    f.report_html((dir / "r.html").string());
  }
  const std::string html = read(dir / "r.html");
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("graph-fallback"), std::string::npos);
  EXPECT_NE(html.find("Graphviz (dot) is not installed"), std::string::npos);
  const size_t nodes = ag::detail::report::count_graph_nodes(f.concrete_functions()[0].graph());
  EXPECT_EQ(count(html, "class=\"ag-row\""), nodes);
  EXPECT_NE(html.find("= MatMul(%0, %1)"), std::string::npos);  // the graph text
  fs::remove_all(dir);
}

TEST(ReportHtml, SourceLinksPointAtLinesOfThePage) {
  auto f = ag::function(relu_layer, {.jit_compile = false});
  auto c = f.get_concrete_function(ag::TensorSpec({2, 3}, ag::float32), ag::TensorSpec({3, 4}, ag::float32));
  ag::detail::report::FunctionReport r;
  r.concretes.push_back(ag::detail::report::collect_concrete(*c.core(), false));
  const std::string html = ag::detail::report::render_html(r, {});
  size_t links = 0;
  for (size_t p = html.find("class=\"src-link\""); p != std::string::npos; p = html.find("class=\"src-link\"", p + 1)) {
    const size_t f0 = html.find("data-file=\"", p) + 11, f1 = html.find('"', f0);
    const size_t h0 = html.find("href=\"#", p) + 7, h1 = html.find('"', h0);
    EXPECT_TRUE(fs::exists(html.substr(f0, f1 - f0))) << html.substr(f0, f1 - f0);
    EXPECT_NE(html.find("id=\"" + html.substr(h0, h1 - h0) + "\""), std::string::npos) << html.substr(h0, h1 - h0);
    ++links;
  }
  EXPECT_GE(links, 3u);  // MatMul, Add, Relu
  EXPECT_NE(html.find(fs::path(AG_THIS_SOURCE).filename().string()), std::string::npos);
  EXPECT_TRUE(this_file_registered);
  EXPECT_NE(html.find("not compiled yet"), std::string::npos);  // collected with compile = false
}

TEST(ReportHtml, RegisteredRewrittenCopyIsShownBesideTheOriginal) {
  const fs::path dir = temp_dir();
  const fs::path copy = dir / "rewritten_copy.cpp";
  std::ofstream(copy) << "// the rewritten copy\nint rewritten_marker_line = 2;\n";
  ag::detail::register_source_file(AG_THIS_SOURCE, copy.c_str());
  auto f = ag::function(relu_layer, {.jit_compile = false});
  f(ag::ones({2, 3}), ag::ones({3, 4}));
  f.report_html((dir / "r.html").string());
  const std::string html = read(dir / "r.html");
  EXPECT_NE(html.find("rewritten_marker_line"), std::string::npos);
  EXPECT_NE(html.find("id=\"rw0-L2\""), std::string::npos);
  ag::detail::register_source_file(AG_THIS_SOURCE, "");
  fs::remove_all(dir);
}

TEST(ReportHtml, HistoryShowsRetracesAndEvictions) {
  const fs::path dir = temp_dir();
  auto f = ag::function(relu_layer, {.jit_compile = false, .max_cached = 1});
  f(ag::ones({2, 3}), ag::ones({3, 4}));
  f(ag::ones({4, 3}), ag::ones({3, 4}));  // evicts the first
  f.evict();
  f.report_html((dir / "r.html").string());
  const std::string html = read(dir / "r.html");
  const size_t t1 = html.find("trace #1"), t2 = html.find("trace #2"), lru = html.find("evicted (least recently used)"),
               all = html.find("evicted by evict()");
  ASSERT_NE(t1, std::string::npos);
  ASSERT_NE(t2, std::string::npos);
  ASSERT_NE(lru, std::string::npos);
  ASSERT_NE(all, std::string::npos);
  EXPECT_LT(t1, lru);  // in the order they happened
  EXPECT_LT(lru, t2);
  EXPECT_LT(t2, all);
  EXPECT_NE(html.find("No concrete function"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportHtml, AnUnwritablePathIsAnErrorNamingIt) {
  auto f = ag::function(relu_layer, {.jit_compile = false});
  f(ag::ones({2, 3}), ag::ones({3, 4}));
  AG_EXPECT_ERROR(ag::Error, f.report_html("/nonexistent-dir-agc/report.html"), "/nonexistent-dir-agc/report.html",
                  "No such file or directory");
  auto c = f.concrete_functions()[0];
  AG_EXPECT_ERROR(ag::Error, c.report_html("/proc/agc-report.html"), "/proc/agc-report.html");
}

TEST(ReportTextDiff, KeepsCommonLinesAndMarksTheRest) {
  const auto d = ag::detail::report::diff_lines("a\nb\nc\n", "a\nc\nd\n");
  std::string s;
  for (const auto& l : d) s += fmt::format("{}{}|", l.op, l.text);
  EXPECT_EQ(s, " a|-b| c|+d|");
  const auto big = ag::detail::report::diff_lines("x\ny\n", "x\nz\n", /*max_cells=*/1);
  ASSERT_EQ(big.size(), 4u);  // too large to compare: all old lines out, all new lines in
  EXPECT_EQ(big[0].op, '-');
  EXPECT_EQ(big[3].op, '+');
}

TEST(ReportSvg, NodesAreTaggedAndLinkedReturnPseudoNodesAreNot) {
  const std::string svg =
      "<svg>\n<g id=\"node1\" class=\"node\">\n<title>n0</title>\n<polygon/>\n</g>\n"
      "<g id=\"node2\" class=\"node\">\n<title>n1s0_n2</title>\n<text>x</text>\n</g>\n"
      "<g id=\"node3\" class=\"node\">\n<title>ret</title>\n<polygon/>\n</g>\n</svg>";
  const std::string out = ag::detail::report::link_svg_nodes(svg, "s3");
  EXPECT_NE(out.find("<g id=\"s3-n0\" class=\"node ag-node\">\n<title>n0</title><a href=\"#s3-row-n0\">\n<polygon/>\n</a></g>"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("<g id=\"s3-n1s0_n2\" class=\"node ag-node\">"), std::string::npos);
  EXPECT_NE(out.find("<g id=\"node3\" class=\"node\">\n<title>ret</title>"), std::string::npos);
  EXPECT_EQ(count(out, "ag-node"), 2u);
}

}  // namespace
