// The fusion pass's cost rule and its inspection: an expensive op is not fused into a loop larger
// than its own value (x[1000,4] + exp(b[4]) computes exp 4 times, not 4000), cheap ops still are
// (up to kMaxRecomputedPerGroup per group), same-size chains fuse whole; the groups are visible
// in AG_DUMP's .fused.graph.txt. Every case also checks values: eager == interpreter == JIT.
#include <regex>
#include <sstream>

#include "jit_test_util.h"

namespace {

using ag::Tensor;
using agtest::fused_plan;
using agtest::plan_line;

// "group=%7" in a plan line, or "" when the node is in no group.
std::string group_of(const std::string& line) {
  std::smatch m;
  return std::regex_search(line, m, std::regex("group=(%[0-9]+)")) ? m[1].str() : std::string();
}

bool is_fused(const std::string& line) { return line.find("[fused") != std::string::npos; }

const Tensor kX = ag::random_uniform({1000, 4}, ag::float32, -2, 2, 11);
const Tensor kB = ag::random_uniform({4}, ag::float32, -2, 2, 12);

TEST(JitFusion, BroadcastTranscendentalIsComputedOnceNotPerElementOfTheLoop) {
  auto fn = [](Tensor x, Tensor b) { return x + ag::exp(b); };
  const std::string plan = fused_plan(fn, {}, kX, kB);
  const std::string exp_line = plan_line(plan, "Exp");
  ASSERT_FALSE(exp_line.empty()) << plan;
  EXPECT_FALSE(is_fused(exp_line)) << plan;  // its own 4-element buffer
  EXPECT_NE(exp_line.find("[arena"), std::string::npos) << plan;
  EXPECT_EQ(group_of(plan_line(plan, "Add")), "") << plan;  // nothing fused into the add's loop
  agtest::expect_three_way("x + exp(b)", fn, {}, kX, kB);
}

TEST(JitFusion, CheapBroadcastOpsAreRecomputedInTheConsumersLoop) {
  auto fn = [](Tensor x, Tensor b) { return x + ag::relu(b * 2.f - 1.f); };
  const std::string plan = fused_plan(fn, {}, kX, kB);
  const std::string add = plan_line(plan, "Add");
  ASSERT_NE(group_of(add), "") << plan;
  for (const char* op : {"Mul", "Sub", "Relu"}) {
    EXPECT_TRUE(is_fused(plan_line(plan, op))) << op << "\n" << plan;
    EXPECT_EQ(group_of(plan_line(plan, op)), group_of(add)) << op << "\n" << plan;
  }
  agtest::expect_three_way("x + relu(b*2-1)", fn, {}, kX, kB);
}

TEST(JitFusion, SameSizeChainsFuseTranscendentalsToo) {
  auto fn = [](Tensor x) { return ag::exp(x) * 2.f + ag::tanh(x); };
  const std::string plan = fused_plan(fn, {}, kX);
  EXPECT_TRUE(is_fused(plan_line(plan, "Exp"))) << plan;
  EXPECT_TRUE(is_fused(plan_line(plan, "Tanh"))) << plan;
  EXPECT_EQ(group_of(plan_line(plan, "Exp")), group_of(plan_line(plan, "Add"))) << plan;
  agtest::expect_three_way("exp(x)*2 + tanh(x)", fn, {}, kX);
}

TEST(JitFusion, ReductionOfABroadcastTranscendental) {
  // Over the 1000 rows: a reduction (over the 4 columns it would be unrolled into adds).
  auto fn = [](Tensor x, Tensor b) { return ag::reduce_sum(x * ag::sigmoid(b), {0}); };
  const std::string plan = fused_plan(fn, {}, kX, kB);
  EXPECT_FALSE(is_fused(plan_line(plan, "Sigmoid"))) << plan;
  const std::string mul = plan_line(plan, "Mul");
  EXPECT_TRUE(is_fused(mul)) << plan;  // the product is computed in the reduction's loop
  EXPECT_EQ(group_of(mul), group_of(plan_line(plan, "ReduceSum"))) << plan;
  agtest::expect_three_way("reduce_sum(x * sigmoid(b), 0)", fn, {}, kX, kB);
}

TEST(JitFusion, AGroupRecomputesAtMostFourBroadcastOps) {
  auto fn = [](Tensor x, Tensor b) {
    Tensor y = b;
    for (int i = 0; i < 3; ++i) y = ag::relu(y * 1.5f) - 0.25f;  // a chain of 9 cheap ops on b's 4 elements
    return x + y;
  };
  const std::string plan = fused_plan(fn, {}, kX, kB);
  const std::string root = group_of(plan_line(plan, "Add"));
  ASSERT_NE(root, "") << plan;
  int recomputed = 0, fused_elsewhere = 0;
  std::istringstream lines(plan);
  for (std::string line; std::getline(lines, line);) {
    if (!is_fused(line)) continue;
    (group_of(line) == root ? recomputed : fused_elsewhere) += 1;
  }
  EXPECT_EQ(recomputed, 4) << plan;
  EXPECT_EQ(fused_elsewhere, 4) << plan;  // the rest: a loop over b's own 4 elements (a root and 4 fused)
  agtest::expect_three_way("x + 9 cheap ops on b", fn, {}, kX, kB);
}

TEST(JitFusion, UnknownDimsDecideOnTheStaticDims) {
  // b misses x's unknown leading dim: it broadcasts whatever that dim is.
  const ag::FunctionOptions rows{.input_signature = {ag::TensorSpec({-1, 4}, ag::float32), ag::TensorSpec({4}, ag::float32)}};
  auto fn = [](Tensor x, Tensor b) { return x + ag::exp(b); };
  EXPECT_FALSE(is_fused(plan_line(fused_plan(fn, rows, kX, kB), "Exp")));
  agtest::expect_three_way_with("x[?,4] + exp(b[4])", fn, rows, {}, kX, kB);
  // Two unknown dims are taken to be equal: exp fuses. A run-time 1 still gives the right values
  // (exp is then recomputed per element of the loop).
  const ag::FunctionOptions vecs{.input_signature = {ag::TensorSpec({-1}, ag::float32), ag::TensorSpec({-1}, ag::float32)}};
  const Tensor x = ag::random_uniform({37}, ag::float32, -2, 2, 13);
  EXPECT_TRUE(is_fused(plan_line(fused_plan(fn, vecs, x, x), "Exp")));
  agtest::expect_three_way_with("x[?] + exp(b[?]), same sizes", fn, vecs, {}, x, ag::random_uniform({37}, ag::float32, -2, 2, 14));
  agtest::expect_three_way_with("x[?] + exp(b[?]), b of size 1", fn, vecs, {}, x, ag::constant({0.5f}));
  agtest::expect_three_way_with("x[?] + exp(b[?]), x of size 1", fn, vecs, {}, ag::constant({0.5f}), x);
}

TEST(JitFusion, DotDumpDrawsEachGroupAsACluster) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("agc-fused-dot-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ag::detail::set_dump_dir(dir.string());
  {
    auto f = ag::function([](Tensor x, Tensor b) { return x * 2.f + ag::exp(b); }, {.name = "clustered"});
    f(kX, kB);
  }
  ag::detail::set_dump_dir("");
  std::string dot;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().ends_with(".fused.dot")) {
      std::ifstream in(e.path());
      dot.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  fs::remove_all(dir);
  EXPECT_NE(dot.find("subgraph cluster_note0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"fused group %"), std::string::npos) << dot;
}

}  // namespace
