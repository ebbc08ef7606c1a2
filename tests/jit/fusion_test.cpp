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

// A cheap value read by loops of two groups is recomputed in each when it reads at most one input
// of its own size: each loop reads that input where it would have read the value, and the value's
// own loop nest is gone. Reading two such inputs, it is written once and read back instead.
TEST(JitFusion, ABiasAddReadByTwoLoopsIsRecomputedInEach) {
  auto fn = [](Tensor x, Tensor b) {
    const Tensor h = x + b;
    return ag::reduce_sum(ag::relu(h), {1}) + ag::reduce_max(h * h, {1});
  };
  // Rows of 64: each reduction is a loop of its own (not inline).
  const Tensor x = ag::random_uniform({256, 64}, ag::float32, -2, 2, 19), b = ag::random_uniform({64}, ag::float32, -2, 2, 20);
  const std::string plan = fused_plan(fn, {}, x, b);
  const std::string add = plan_line(plan, "Add");
  EXPECT_TRUE(is_fused(add)) << plan;
  const std::string sum = group_of(plan_line(plan, "ReduceSum")), max = group_of(plan_line(plan, "ReduceMax"));
  EXPECT_NE(sum, max) << plan;
  EXPECT_TRUE(add.find("group=" + sum + "," + max) != std::string::npos ||
              add.find("group=" + max + "," + sum) != std::string::npos)
      << plan;
  agtest::expect_three_way("h = x + b read by two reductions", fn, {}, x, b);

  auto two_full = [](Tensor x, Tensor y) {
    const Tensor h = x + y;
    return ag::reduce_sum(ag::relu(h), {1}) + ag::reduce_max(h * h, {1});
  };
  const Tensor y = ag::random_uniform({256, 64}, ag::float32, -2, 2, 15);
  const std::string written = fused_plan(two_full, {}, x, y);
  EXPECT_FALSE(is_fused(plan_line(written, "Add"))) << written;
  agtest::expect_three_way("h = x + y read by two reductions", two_full, {}, x, y);
}

// Not into a reduction's loop when an input repeats along the reduced axis: a layer norm's
// x - mean(x) feeds the variance (a row reduction) and the normalized output; it is written once,
// and the variance's loop reads one buffer along its rows.
TEST(JitFusion, ALayerNormsCenteredValueIsWrittenOnce) {
  auto fn = [](Tensor x) {
    const Tensor centered = x - ag::reduce_mean(x, {1}, true);
    return centered * ag::rsqrt(ag::reduce_mean(centered * centered, {1}, true) + 1e-5f);
  };
  const Tensor x = ag::random_uniform({128, 128}, ag::float32, -2, 2, 22);
  const std::string plan = fused_plan(fn, {}, x);
  EXPECT_FALSE(is_fused(plan_line(plan, "Sub"))) << plan;
  agtest::expect_three_way("layer norm", fn, {.rtol = 1e-5, .atol = 1e-6}, x);
}

// The dense layer's case under a tape, inside the Function: h = x w1 + b feeds the activation the
// next layer multiplies (written for the product) and, in the gradient, the activation's mask (in
// the loop of the gradient's select); h is recomputed in both. Eager == interpreter == JIT.
TEST(JitFusion, TheBiasAddOfADenseLayerAndItsGradientsMask) {
  const Tensor x = ag::random_uniform({64, 32}, ag::float32, -1, 1, 16);
  const Tensor w1 = ag::random_uniform({32, 48}, ag::float32, -0.5, 0.5, 17);
  const Tensor b = ag::random_uniform({48}, ag::float32, -0.5, 0.5, 18);
  const Tensor w2 = ag::random_uniform({48, 8}, ag::float32, -0.5, 0.5, 21);
  auto fn = [](Tensor x, Tensor w1, Tensor b, Tensor w2) {
    ag::GradientTape tape;
    tape.watch(w1);
    tape.watch(b);
    const Tensor h = ag::matmul(x, w1) + b;
    const Tensor loss = ag::reduce_sum(ag::square(ag::matmul(ag::relu(h), w2)));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b});
    return ag::concat({ag::reshape(g[0], {-1}), g[1]}, 0);
  };
  const std::string plan = fused_plan(fn, {}, x, w1, b, w2);
  const std::string add = plan_line(plan, "Add"), relu = plan_line(plan, "Relu"), select = plan_line(plan, "Select");
  EXPECT_FALSE(is_fused(relu)) << plan;
  EXPECT_TRUE(is_fused(add)) << plan;
  EXPECT_NE(add.find(group_of(relu)), std::string::npos) << plan;
  EXPECT_NE(add.find(group_of(select)), std::string::npos) << plan;
  agtest::expect_three_way("gradient of a dense layer with relu", fn, {.rtol = 1e-5, .atol = 1e-5}, x, w1, b, w2);
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
