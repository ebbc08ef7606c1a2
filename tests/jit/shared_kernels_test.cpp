// Kernels shared across compiles (shared_kernels.h, docs/jit.md): a split module's kernels are
// named by their IR, and a compile that finds one already compiled in the process calls it
// instead of compiling it again. Checked: the sharing ran (engine counters, the compile log, the
// same name in both Functions' IR); values eager == interpreter == JIT and the same bits as with
// AG_JIT_SHARE_KERNELS=0; a second signature, a second Function, a gradient Function under a
// tape inside and outside the trace, compiles on four threads at once; a kernel's code stays
// while any function calling it lives and leaves with the last; a disk-cache entry of code that
// shared links alone in a process where nothing else is left.
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "../common/log_capture.h"
#include "engine.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

// Chains of 10x10 int32 products: one packed kernel (244 instructions), compiled apart.
using agtest::power;
Tensor power_then_scale(const Tensor& x, const Tensor& s) {
  Tensor r = x;
  for (int i = 0; i < 20; ++i) r = ag::matmul(x, r);
  return r * ag::reduce_sum(s);
}

// Dense layers with a row max and a column mean each: matmul kernels and loop nests apart.
Tensor stacked(Tensor x, const Tensor& w, int n) {
  for (int i = 0; i < n; ++i) {
    Tensor h = ag::tanh(ag::matmul(x, w) * static_cast<float>(i + 1));
    x = h - ag::reduce_max(h, {1}, true) + ag::reduce_mean(h, {0}, true);
  }
  return x;
}
Tensor layers(const Tensor& x, const Tensor& w) { return stacked(x, w, 12); }
// Three: a gradient through twelve amplifies the JIT's and Eigen's few ULP of tanh past 1e-4
// on SSE.
Tensor three_layers(const Tensor& x, const Tensor& w) { return stacked(x, w, 3); }

struct Counts {
  int64_t hits = 0, objects = 0;
};
Counts counts() {
  auto engine = ag::jit::Engine::get();
  return {engine->shared_kernel_hits(), engine->shared_kernel_objects()};
}

// The names of the functions `ir` defines that end in a kernel's hash (`<stem>.<16 hex digits>`).
std::set<std::string> shared_names(const std::string& ir) {
  std::set<std::string> names;
  for (size_t p = ir.find("\ndefine "); p != std::string::npos; p = ir.find("\ndefine ", p + 1)) {
    const size_t at = ir.find('@', p), paren = ir.find('(', at);
    const std::string name = ir.substr(at + 1, paren - at - 1);
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos && name.size() - dot - 1 == 16 &&
        name.find_first_not_of("0123456789abcdef", dot + 1) == std::string::npos)
      names.insert(name);
  }
  return names;
}

const agtest::Tol kLayersTol{.rtol = 1e-4, .atol = 1e-3};  // 12 layers amplify tanh's few ULP

// Compiles, not disk-cache hits.
class SharedKernels : public ::testing::Test {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
};

TEST_F(SharedKernels, ASecondFunctionCallsTheKernelsOfTheFirst) {
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 1), s = ag::constant({1, 2, 3});
  auto first = ag::function(power);
  const Counts before = counts();
  agtest::expect_same(power(x), first(x), {}, "x^31");
  EXPECT_EQ(counts().objects, before.objects + 1);
  const agtest::LogCapture log(ag::detail::LogTopic::Compile);
  agtest::expect_three_way("x^21 * sum(s)", power_then_scale, {}, x, s);
  EXPECT_GE(counts().hits, before.hits + 1);
  EXPECT_NE(log.text().find("kernel shared (compiled before in this process"), std::string::npos) << log.text();
  // Both call one kernel, named by its IR in each.
  auto second = ag::function(power_then_scale);
  const std::set<std::string> a = shared_names(first.get_concrete_function(x).llvm_ir(true));
  const std::set<std::string> b = shared_names(second.get_concrete_function(x, s).llvm_ir(true));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a, b);
}

TEST_F(SharedKernels, ASecondSignatureCallsTheKernelsOfTheFirst) {
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 2);
  auto f = ag::function(power_then_scale);
  agtest::expect_same(power_then_scale(x, ag::constant({1, 1})), f(x, ag::constant({1, 1})), {}, "s of 2");
  const Counts before = counts();
  agtest::expect_same(power_then_scale(x, ag::constant({1, 2, 3, 4})), f(x, ag::constant({1, 2, 3, 4})), {}, "s of 4");
  EXPECT_EQ(f.stats().compiles, 2);
  EXPECT_EQ(counts().hits, before.hits + 1);
  EXPECT_EQ(counts().objects, before.objects);  // nothing new compiled apart
}

TEST_F(SharedKernels, AFunctionWhoseKernelsAreAllSharedCompilesOnlyItsEntry) {
  const Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 3), w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 4);
  auto first = ag::function(layers);
  const Tensor expected = first(x, w);
  auto engine = ag::jit::Engine::get();
  const int64_t split = engine->split_compiles();
  const Counts before = counts();
  auto second = ag::function(layers);
  const Tensor shared = second(x, w);
  EXPECT_TRUE(agtest::same_tensor(expected, shared, {.rtol = 0, .atol = 0}));
  EXPECT_TRUE(agtest::same_tensor(layers(x, w), shared, kLayersTol));
  EXPECT_EQ(engine->split_compiles(), split);  // no second module: every kernel was there
  EXPECT_GE(counts().hits, before.hits + 2);   // a matmul kernel and loop nests
  EXPECT_EQ(counts().objects, before.objects);
  // The same bits as kernels compiled for the Function alone.
  const int64_t hits = counts().hits;
  const agtest::ScopedEnv alone("AG_JIT_SHARE_KERNELS", "0");
  auto third = ag::function(layers);
  EXPECT_TRUE(agtest::same_tensor(shared, third(x, w), {.rtol = 0, .atol = 0}));
  EXPECT_EQ(counts().hits, hits);
  EXPECT_TRUE(shared_names(third.get_concrete_function(x, w).llvm_ir(true)).empty());
}

TEST_F(SharedKernels, OffWithAG_JIT_SHARE_KERNELS) {
  const agtest::ScopedEnv off("AG_JIT_SHARE_KERNELS", "0");
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 5);
  auto first = ag::function(power);
  (void)first(x);
  const Counts before = counts();
  auto second = ag::function(power);
  agtest::expect_same(power(x), second(x), {}, "x^31");
  EXPECT_EQ(counts().hits, before.hits);
  EXPECT_EQ(counts().objects, before.objects);
}

TEST_F(SharedKernels, AKernelLeavesWithTheLastFunctionCallingIt) {
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 6), s = ag::constant({2});
  const Counts before = counts();
  std::optional<decltype(ag::function(power))> first(ag::function(power));
  (void)(*first)(x);
  EXPECT_EQ(counts().objects, before.objects + 1);
  auto second = ag::function(power_then_scale);
  (void)second(x, s);
  first.reset();  // the kernel's first compile is gone; the second Function still calls it
  EXPECT_EQ(counts().objects, before.objects + 1);
  agtest::expect_same(power_then_scale(x, s), second(x, s), {}, "after the first Function");
  second = ag::function(power_then_scale);  // the old one's code leaves, and the kernel with it
  EXPECT_EQ(counts().objects, before.objects);
  agtest::expect_same(power_then_scale(x, s), second(x, s), {}, "compiled anew");
  EXPECT_EQ(counts().objects, before.objects + 1);
}

TEST_F(SharedKernels, AGradientFunctionSharesTheForwardKernelsUnderATape) {
  const Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 7), w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 8);
  auto forward = ag::function(three_layers);
  (void)forward(x, w);
  const Counts before = counts();
  // The tape inside the trace: the gradient's forward pass is the same layers.
  auto inside = [](Tensor x, Tensor w) {
    ag::GradientTape tape;
    tape.watch(w);
    return tape.gradient(ag::reduce_sum(three_layers(x, w)), w);
  };
  agtest::expect_three_way("d sum(layers) / dw, tape inside", inside, kLayersTol, x, w);
  EXPECT_GT(counts().hits, before.hits);
  // The tape outside: the forward Function's code under it, against eager.
  ag::GradientTape eager_tape, staged_tape;
  eager_tape.watch(w);
  staged_tape.watch(w);
  const Tensor eager = eager_tape.gradient(ag::reduce_sum(three_layers(x, w)), w);
  agtest::expect_same(eager, staged_tape.gradient(ag::reduce_sum(forward(x, w)), w), kLayersTol, "tape outside");
}

TEST_F(SharedKernels, FourThreadsCompilingTheSameKernelsAtOnce) {
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 9);
  const Tensor expected = power(x);
  const Counts before = counts();
  for (int round = 1; round <= 3; ++round) {
    // Four Functions alive through the round: one compiles the kernel, three find it (made or
    // being made) and wait for it.
    std::vector<decltype(ag::function(power))> functions;
    for (int t = 0; t < 4; ++t) functions.push_back(ag::function(power));
    std::vector<Tensor> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { got[t] = functions[t](x); });
    for (std::thread& t : threads) t.join();
    for (const Tensor& g : got) EXPECT_TRUE(agtest::same_tensor(expected, g));
    EXPECT_EQ(counts().hits - before.hits, 3 * round);
    EXPECT_EQ(counts().objects, before.objects + 1);
  }
}

TEST_F(SharedKernels, ADiskEntryOfCodeThatSharedLinksAlone) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("agc-shared-kernels-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const agtest::ScopedEnv cache("AG_CACHE_DIR", dir.c_str());
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 10), s = ag::constant({3, 4});
  const Counts before = counts();
  {
    auto first = ag::function(power);
    (void)first(x);
    auto second = ag::function(power_then_scale);
    (void)second(x, s);  // calls the first one's kernel; its entry holds that kernel's object
    EXPECT_EQ(counts().hits, before.hits + 1);
  }
  EXPECT_EQ(counts().objects, before.objects);  // nothing left to link against
  auto third = ag::function(power_then_scale);
  agtest::expect_same(power_then_scale(x, s), third(x, s), {}, "from the disk cache");
  EXPECT_EQ(third.stats().disk_hits, 1);
  fs::remove_all(dir);
}

}  // namespace
