// Rolled loops (Program::rolled_loops, AG_JIT_ROLL): a program of many loop nests keeps its
// outer loops as loops, and its row reductions accumulate in registers. LLVM's full unrolling of
// short outer loops made a 40-layer small-MLP graph compile in 3.5 s (docs/jit.md, "Compile
// times"). Checked: which programs get rolled loops, that the IR says so, that the disk cache
// keeps the two apart, and eager == interpreter == JIT for every reduction form it changes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

// `layers` small dense layers with a row max and a column mean each: about 4 loop nests a layer.
Tensor layers(Tensor x, const Tensor& w, const Tensor& b, int n) {
  for (int i = 0; i < n; ++i) {
    Tensor h = ag::tanh(ag::matmul(x, w) + b * static_cast<float>(i + 1));
    x = h - ag::reduce_max(h, {1}, true) + ag::reduce_mean(h, {0}, true);
  }
  return ag::reduce_sum(x);
}

// Whether a function other than a matmul kernel has a loop LLVM may not unroll: a branch with
// `!llvm.loop !N`, `!N = distinct !{!N, ..., !M}` and `!M = !{!"llvm.loop.unroll.disable"}`. A
// kernel's row blocks are always such a loop, and so is the block loop of agc's own vector code
// (it also carries `llvm.loop.vectorize.enable` false): neither counts. Optimized IR may hold two modules (the second
// after "; ---- compiled as a second module"), each numbering its metadata, and a large entry's
// loop nests are functions of their own there.
bool module_has_rolled_loop(const std::string& ir) {
  std::string disable, vector_loop;  // "!M", and the vectorize-disable node
  std::vector<std::string> lines;
  std::istringstream in(ir);
  for (std::string line; std::getline(in, line);) {
    if (line.find("!{!\"llvm.loop.unroll.disable\"}") != std::string::npos) disable = line.substr(0, line.find(' '));
    if (line.find("!{!\"llvm.loop.vectorize.enable\", i1 false}") != std::string::npos)
      vector_loop = line.substr(0, line.find(' '));
    lines.push_back(line);
  }
  if (disable.empty()) return false;
  auto refers_to = [](const std::string& line, const std::string& node) {
    return !node.empty() && (line.find(", " + node + "}") != std::string::npos || line.find(", " + node + ",") != std::string::npos);
  };
  std::set<std::string> loop_ids;
  for (const std::string& line : lines)
    if (line.rfind("!", 0) == 0 && line.find("distinct") != std::string::npos && refers_to(line, disable) &&
        !refers_to(line, vector_loop))
      loop_ids.insert(line.substr(0, line.find(' ')));
  bool in_kernel = false;
  for (const std::string& line : lines) {
    if (line.rfind("define ", 0) == 0) in_kernel = line.find("@agc.gemm.") != std::string::npos;
    const size_t at = line.find("!llvm.loop !");
    if (in_kernel || at == std::string::npos) continue;
    const std::string id = line.substr(at + 11, line.find_first_of(", ", at + 11) - (at + 11));
    if (loop_ids.count(id)) return true;
  }
  return false;
}

bool has_rolled_outer_loop(const std::string& text) {
  const std::string marker = "; ---- compiled as a second module";
  const size_t second = text.find(marker);
  if (second == std::string::npos) return module_has_rolled_loop(text);
  return module_has_rolled_loop(text.substr(0, second)) || module_has_rolled_loop(text.substr(second));
}

struct Mlp {
  Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 1);
  Tensor w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 2);
  Tensor b = ag::random_uniform({32}, ag::float32, -0.1, 0.1, 3);
};

TEST(RolledLoops, OnlyProgramsOfManyLoopNestsKeepTheirOuterLoops) {
  const Mlp m;
  auto small = ag::function([](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 2); });
  auto large = ag::function([](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 16); });
  EXPECT_FALSE(has_rolled_outer_loop(small.get_concrete_function(m.x, m.w, m.b).llvm_ir(false)));
  EXPECT_TRUE(has_rolled_outer_loop(large.get_concrete_function(m.x, m.w, m.b).llvm_ir(false)));
  // The optimized code of the large one still loops over rows: LLVM kept the metadata.
  EXPECT_TRUE(has_rolled_outer_loop(large.get_concrete_function(m.x, m.w, m.b).llvm_ir(true)));
  agtest::expect_three_way(
      "16 layers (rolled)", [](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 16); },
      {.rtol = 1e-4, .atol = 1e-3}, m.x, m.w, m.b);
}

TEST(RolledLoops, TheEnvironmentForcesEitherWay) {
  const Mlp m;
  {
    agtest::ScopedEnv roll("AG_JIT_ROLL", "1");
    auto small = ag::function([](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 2); });
    EXPECT_TRUE(has_rolled_outer_loop(small.get_concrete_function(m.x, m.w, m.b).llvm_ir(false)));
  }
  {
    agtest::ScopedEnv roll("AG_JIT_ROLL", "0");
    auto large = ag::function([](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 16); });
    EXPECT_FALSE(has_rolled_outer_loop(large.get_concrete_function(m.x, m.w, m.b).llvm_ir(false)));
  }
  agtest::ScopedEnv roll("AG_JIT_ROLL", "sometimes");
  auto f = ag::function([](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 2); });
  try {
    f(m.x, m.w, m.b);
    ADD_FAILURE() << "AG_JIT_ROLL=sometimes was accepted";
  } catch (const ag::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("AG_JIT_ROLL='sometimes'"), std::string::npos) << e.what();
  }
}

TEST(RolledLoops, TheDiskCacheKeepsRolledAndUnrolledCodeApart) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("agc-rolled-cache-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  agtest::ScopedEnv cache("AG_CACHE_DIR", dir.c_str());
  const Mlp m;
  auto fn = [](Tensor x, Tensor w, Tensor b) { return layers(x, w, b, 2); };
  {
    agtest::ScopedEnv roll("AG_JIT_ROLL", "1");
    auto f = ag::function(fn);
    f(m.x, m.w, m.b);
    EXPECT_EQ(f.stats().compiles, 1);
  }
  auto unrolled = ag::function(fn);
  unrolled(m.x, m.w, m.b);
  EXPECT_EQ(unrolled.stats().disk_hits, 0) << "rolled code was loaded for an unrolled program";
  EXPECT_EQ(unrolled.stats().compiles, 1);
  auto again = ag::function(fn);
  again(m.x, m.w, m.b);
  EXPECT_EQ(again.stats().disk_hits, 1);
  fs::remove_all(dir);
}

// Each reduction form under rolled loops: rows of one and of several trailing dims, columns,
// full, middle axes (no row form), every kind, NaN and signed zeros, integers, and rows large
// enough for the pool.
TEST(RolledLoops, ReductionsMatchEagerAndTheInterpreter) {
  agtest::ScopedEnv roll("AG_JIT_ROLL", "1");
  const Tensor x = ag::random_uniform({6, 5, 7}, ag::float32, -2, 2, 11);
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{2}, {1, 2}, {0}, {0, 1, 2}, {1}, {0, 2}}) {
    const std::string at = fmt::format("axes {}", fmt::join(axes, ","));
    agtest::expect_three_way("reduce_sum " + at, [axes](Tensor v) { return ag::reduce_sum(ag::exp(v) * 0.5f, axes); },
                             {.rtol = 1e-5, .atol = 1e-5}, x);
    agtest::expect_three_way("reduce_mean " + at, [axes](Tensor v) { return ag::reduce_mean(v, axes, true); },
                             {.rtol = 1e-5, .atol = 1e-6}, x);
    agtest::expect_three_way("reduce_max " + at, [axes](Tensor v) { return ag::reduce_max(v * v, axes); }, {}, x);
    agtest::expect_three_way("reduce_min " + at, [axes](Tensor v) { return ag::reduce_min(v - 1.0f, axes); }, {}, x);
    agtest::expect_three_way("reduce_prod " + at, [axes](Tensor v) { return ag::reduce_prod(v * 0.5f + 1.0f, axes); },
                             {.rtol = 1e-5, .atol = 1e-6}, x);
    agtest::expect_three_way("reduce_any " + at, [axes](Tensor v) { return ag::reduce_any(v > 1.5f, axes); }, {}, x);
    agtest::expect_three_way("reduce_all " + at, [axes](Tensor v) { return ag::reduce_all(v > -1.9f, axes); }, {}, x);
  }
  // A broadcast operand keeps the walk's kept dims apart: rows indexed by two outer loops.
  const Tensor y = ag::random_uniform({5, 1}, ag::float32, -1, 1, 14);
  agtest::expect_three_way("reduce_max of a broadcast sum, axis 2", [](Tensor v, Tensor c) { return ag::reduce_max(v + c, {2}); },
                           {}, x, y);
  agtest::expect_three_way("reduce_sum of a broadcast product, axes 2 keepdims",
                           [](Tensor v, Tensor c) { return ag::reduce_sum(v * c, {2}, true); }, {.rtol = 1e-5, .atol = 1e-5},
                           x, y);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor special =
      ag::constant(std::vector<float>{1.0f, nan, -3.0f, 0.0f, -0.0f, -0.0f, 0.0f, 2.0f, -0.0f, -0.0f, -0.0f, -0.0f}, {3, 4});
  for (int64_t axis : {0, 1}) {
    agtest::expect_three_way("reduce_max NaN and zeros", [axis](Tensor v) { return ag::reduce_max(v, {axis}); }, {}, special);
    agtest::expect_three_way("reduce_min NaN and zeros", [axis](Tensor v) { return ag::reduce_min(v, {axis}); }, {}, special);
  }
  const Tensor n = ag::random_uniform({9, 13}, ag::int64, -50, 50, 12);
  agtest::expect_three_way("int64 row sums", [](Tensor v) { return ag::reduce_sum(v * 3, {1}); }, {}, n);
  agtest::expect_three_way("int64 row max", [](Tensor v) { return ag::reduce_max(v, {1}); }, {}, n);
  agtest::expect_three_way("int64 row mean", [](Tensor v) { return ag::reduce_mean(v, {1}); }, {}, n);
}

TEST(RolledLoops, LargeRowReductionsStillSplitOverThePool) {
  agtest::ScopedEnv roll("AG_JIT_ROLL", "1");
  // 2048 rows of 300: 614K elements, above two pool grains only when a row counts as its length.
  const Tensor x = ag::random_uniform({2048, 300}, ag::float32, -1, 1, 13);
  auto fn = [](Tensor v) { return ag::reduce_sum(v * v, {1}); };
  auto f = ag::function(fn);
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(x).llvm_ir(true), "agc_rt_parallel_for"));
  agtest::expect_three_way("row sums of 2048 x 300", fn, {.rtol = 1e-5, .atol = 1e-5}, x);
}

}  // namespace
