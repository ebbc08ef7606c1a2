// Two threads per compile (module_split.h, docs/jit.md): a module's matmul kernels compile as a
// second module, the two parts claimed by the calling thread and a pool thread, and the two
// objects link into one JITDylib. Checked: the split ran (engine counters; on two threads when
// the pool thread claimed a part in time), values eager == interpreter == JIT either way,
// one thread compiles both modules in turn, tiered execution's background compile keeps to its
// own thread, AG_JIT_SPLIT=0, small kernels stay in the module, inspection shows both modules,
// a mid-size entry's staged loop gives its inner nests, and a split entry of the disk cache (a
// bundle of two objects) loads in another Function.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ag/detail/parallel.h"
#include "engine.h"
#include "function/background_compiler.h"
#include "jit_test_util.h"
#include "module_split.h"

namespace {

using ag::Tensor;
using Threads = ag::detail::ScopedNumThreads;

using agtest::power;
Tensor dense(const Tensor& x, const Tensor& w) { return ag::tanh(ag::matmul(x, w)); }

// 12 small dense layers with a row max and a column mean each (an entry function of thousands of
// instructions), then rows picked by `rows` (a run-time index check inside a loop nest).
Tensor layers_then_gather(Tensor x, const Tensor& w, const Tensor& rows) {
  for (int i = 0; i < 12; ++i) {
    Tensor h = ag::tanh(ag::matmul(x, w) * static_cast<float>(i + 1));
    x = h - ag::reduce_max(h, {1}, true) + ag::reduce_mean(h, {0}, true);
  }
  return ag::gather(x, rows);
}

// Twenty small normalizations of a 16-element vector (each a mean, a max and a scaling: loop
// nests too small to move one by one), then rows of `x` picked by `rows` (an index check in the
// entry's second half).
Tensor small_steps_then_gather(Tensor v, const Tensor& x, const Tensor& rows) {
  for (int i = 0; i < 20; ++i) {
    v = v - ag::reduce_mean(v);
    v = v / (ag::reduce_max(ag::abs(v)) + static_cast<float>(i + 1));
  }
  return ag::gather(x * ag::reduce_sum(v), rows);
}

// A recurrent cell stepped by a staged loop: gates and the cell's update, elementwise with
// per-element weights, and a row mean; the loop holds most of a mid-size entry (150 to 500
// instructions) and has no kernels of its own to move.
Tensor recurrent_cell(Tensor h, Tensor c, const Tensor& w, const Tensor& u, const Tensor& steps) {
  Tensor i = 0;
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   const Tensor f = ag::sigmoid(h * w + 1.0f), g = ag::tanh(h * u - c);
                   c = f * c + (1.0f - f) * g;
                   h = ag::tanh(c) * ag::sigmoid(c * w + h * u);
                   h = h - ag::reduce_mean(h, {1}, true) + ag::reduce_max(c, {1}, true) * 0.25f;
                   i += 1;
                 },
                 ag::state(h, c, i), {"h", "c", "i"}, AG_SOURCE_LOC("split_compile_test.cpp", 56));
  return h + c;
}

// Whether `ir` defines a function whose name begins with `name` after offset `from`.
bool defines_after(const std::string& ir, size_t from, const std::string& name) {
  for (size_t p = ir.find("\ndefine ", from); p != std::string::npos; p = ir.find("\ndefine ", p + 1))
    if (ir.substr(p, ir.find('(', p) - p).find(name) != std::string::npos) return true;
  return false;
}

// The instructions of the lowered entry function (before optimization).
size_t entry_instructions(const std::string& lowered_ir) {
  const size_t begin = lowered_ir.find("define i32 @agc_entry(");
  const size_t end = lowered_ir.find("\n}\n", begin);
  size_t n = 0;
  for (size_t p = lowered_ir.find("\n  ", begin); p < end; p = lowered_ir.find("\n  ", p + 1)) ++n;
  return n;
}

struct SplitCounts {
  int64_t split = 0, parallel = 0;
};
SplitCounts counts() {
  auto engine = ag::jit::Engine::get();
  return {engine->split_compiles(), engine->split_compiles_in_parallel()};
}

constexpr const char* kHeader = "compiled as a second module, on a second thread";

// Compiles, not disk-cache hits: the counters count compiles.
class SplitCompile : public ::testing::Test {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
};

TEST_F(SplitCompile, KernelsCompileAsASecondModuleOnAPoolThread) {
  const Threads threads(2);
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 11);
  const SplitCounts before = counts();
  agtest::expect_three_way("x^31 (int32)", power, {}, x);
  const Tensor a = ag::random_uniform({8, 32}, ag::float32, -1, 1, 12), w = ag::random_uniform({32, 32}, ag::float32, -1, 1, 13);
  agtest::expect_three_way("tanh(a @ w)", dense, {.rtol = 1e-4, .atol = 1e-6}, a, w);
  const SplitCounts after = counts();
  EXPECT_EQ(after.split - before.split, 2);
  // Each part goes to whichever thread claims it first: a pool thread that starts late (another
  // process on the core) leaves both to the caller, which then does not wait for it.
  EXPECT_LE(after.parallel - before.parallel, 2);
}

TEST_F(SplitCompile, ALargeEntryMovesItsLoopNestsToTheSecondModule) {
  const Threads threads(2);
  const Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 21), w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 22);
  const Tensor rows = ag::constant({7, 0, 3});
  const SplitCounts before = counts();
  // 12 layers of tanh: the JIT's tanh and Eigen's differ by a few ULP, which the layers amplify.
  const agtest::Tol tol{.rtol = 1e-4, .atol = 1e-3};
  agtest::expect_three_way("12 layers, gather", layers_then_gather, tol, x, w, rows);
  const SplitCounts after = counts();
  EXPECT_EQ(after.split - before.split, 1);
  EXPECT_LE(after.parallel - before.parallel, 1);  // as above
  auto f = ag::function(layers_then_gather);
  const std::string ir = f.get_concrete_function(x, w, rows).llvm_ir(true);
  const size_t header = ir.find(kHeader);
  ASSERT_NE(header, std::string::npos);
  EXPECT_TRUE(defines_after(ir, header, "@agc_entry.nest")) << "no loop nest moved to the second module";
  // The index check inside a moved nest still raises, and nothing is left half done.
  EXPECT_THROW((void)f(x, w, ag::constant({1, 8})), ag::InvalidArgumentError);
  EXPECT_TRUE(agtest::same_tensor(layers_then_gather(x, w, rows), f(x, w, rows), tol));
  // The same code, split or whole: the same bits.
  const agtest::ScopedEnv whole("AG_JIT_SPLIT", "0");
  auto g = ag::function(layers_then_gather);
  EXPECT_TRUE(agtest::same_tensor(g(x, w, rows), f(x, w, rows), {.rtol = 0, .atol = 0}));
}

// A mid-size entry whose staged loop holds most of it: the loop's inner nests move, not the
// whole loop (which would leave the calling thread nothing), and the values are the same bits
// split or whole.
TEST_F(SplitCompile, AMidSizeEntrysStagedLoopGivesItsInnerNestsToTheSecondModule) {
  const Threads threads(2);
  const Tensor h = ag::random_uniform({8, 16}, ag::float32, -1, 1, 31), c = ag::random_uniform({8, 16}, ag::float32, -1, 1, 32);
  const Tensor w = ag::random_uniform({8, 16}, ag::float32, -0.8, 0.8, 33);
  const Tensor u = ag::random_uniform({8, 16}, ag::float32, -0.8, 0.8, 34);
  const Tensor steps = ag::constant(int32_t{5});
  const SplitCounts before = counts();
  agtest::expect_three_way("recurrent cell", recurrent_cell, {.rtol = 1e-4, .atol = 1e-5}, h, c, w, u, steps);
  EXPECT_EQ(counts().split - before.split, 1);
  auto f = ag::function(recurrent_cell);
  auto concrete = f.get_concrete_function(h, c, w, u, steps);
  const size_t size = entry_instructions(concrete.llvm_ir(false));
  // About 300 instructions on AVX-512 (over 500 on x86-64-v3, whose vector loops lower longer):
  // whole, on one thread, before stop 67's threshold; the staged loop holds most of it.
  EXPECT_GE(size, ag::jit::kOutlineNestsAbove);
  const std::string ir = concrete.llvm_ir(true);
  const size_t header = ir.find(kHeader);
  ASSERT_NE(header, std::string::npos);
  EXPECT_TRUE(defines_after(ir, header, "@agc_entry.nest")) << "no loop nest moved to the second module";
  // The staged loop itself stayed with the entry, on the calling thread.
  EXPECT_NE(ir.rfind("\nwhile.body", header), std::string::npos);
  EXPECT_EQ(ir.find("\nwhile.body", header), std::string::npos) << "the whole staged loop moved";
  const agtest::ScopedEnv whole("AG_JIT_SPLIT", "0");
  auto g = ag::function(recurrent_cell);
  EXPECT_TRUE(agtest::same_tensor(g(h, c, w, u, steps), f(h, c, w, u, steps), {.rtol = 0, .atol = 0}));
}

TEST_F(SplitCompile, AnEntryOfSmallNestsMovesItsTailToTheSecondModule) {
  const Threads threads(2);
  const Tensor v = ag::random_uniform({16}, ag::float32, -1, 1, 23), x = ag::random_uniform({8, 4}, ag::float32, -1, 1, 24);
  const Tensor rows = ag::constant({5, 1, 7});
  const SplitCounts before = counts();
  const agtest::Tol tol{.rtol = 1e-5, .atol = 1e-6};
  agtest::expect_three_way("20 small steps, gather", small_steps_then_gather, tol, v, x, rows);
  EXPECT_EQ(counts().split - before.split, 1);
  auto f = ag::function(small_steps_then_gather);
  const std::string ir = f.get_concrete_function(v, x, rows).llvm_ir(true);
  const size_t header = ir.find(kHeader);
  ASSERT_NE(header, std::string::npos);
  EXPECT_EQ(ir.find("@agc_entry.nest"), std::string::npos) << "a nest large enough to move alone";
  const size_t tail = ir.find("define internal void @agc_entry.tail");
  EXPECT_EQ(tail, std::string::npos) << "the tail must be callable from the other module";
  EXPECT_TRUE(defines_after(ir, header, "@agc_entry.tail")) << "the entry's tail did not move";
  // The index check in the moved tail still raises, and the same code whole gives the same bits.
  EXPECT_THROW((void)f(v, x, ag::constant({1, 8})), ag::InvalidArgumentError);
  const agtest::ScopedEnv whole("AG_JIT_SPLIT", "0");
  auto g = ag::function(small_steps_then_gather);
  EXPECT_TRUE(agtest::same_tensor(g(v, x, rows), f(v, x, rows), {.rtol = 0, .atol = 0}));
  EXPECT_EQ(g.get_concrete_function(v, x, rows).llvm_ir(true).find("agc_entry.tail"), std::string::npos);
}

// An MLP's train step with Variables, a tape and Adam, as bench/apps/mlp_adam.cpp has it, in
// smaller sizes whose products still call the runtime's GEMM (256-128-10, batch 64): some forty
// small loop nests (bias vectors, softmax rows, the optimizer's slots), the entry's tail in the
// second module. Where the nests grow large enough to move on their own (layers of sizes that
// leave masked remainders, products agc emits itself) the tail is not needed: these sizes and
// their neighbours move it on x86-64-v2, v3 and v4 alike (ctest runs all three). Eagerly and
// compiled from the same weights, step by step.
struct AdamMlp {
  ag::Variable w1{ag::random_uniform({256, 128}, ag::float32, -0.05, 0.05, 31), "w1"}, b1{ag::zeros({128}), "b1"};
  ag::Variable w2{ag::random_uniform({128, 10}, ag::float32, -0.05, 0.05, 32), "w2"}, b2{ag::zeros({10}), "b2"};
  ag::optimizers::Adam adam{1e-3};
  Tensor step(const Tensor& x, const Tensor& y) {
    ag::GradientTape tape;
    const Tensor logits = ag::matmul(ag::relu(ag::matmul(x, w1) + b1), w2) + b2;
    const Tensor shifted = logits - ag::stop_gradient(ag::reduce_max(logits, 1, true));
    const Tensor loss = -ag::reduce_mean(ag::reduce_sum(y * (shifted - ag::log(ag::reduce_sum(ag::exp(shifted), 1, true))), 1));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2});
    adam.apply_gradients({{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}});
    return loss;
  }
};

TEST_F(SplitCompile, ATrainStepWithAdamMovesItsTailAndTrainsAsEagerly) {
  const Threads threads(2);
  const Tensor x = ag::random_uniform({64, 256}, ag::float32, 0, 1, 33);
  const Tensor y = ag::one_hot(ag::random_uniform({64}, ag::int32, 0, 10, 34), 10);
  AdamMlp eager, compiled;
  auto f = ag::function([&](Tensor xs, Tensor ys) { return compiled.step(xs, ys); });
  const SplitCounts before = counts();
  const agtest::Tol tol{.rtol = 1e-4, .atol = 1e-6};
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(agtest::same_tensor(eager.step(x, y), f(x, y), tol)) << "step " << i;
    for (auto [e, c] : {std::pair{&eager.w1, &compiled.w1}, {&eager.b1, &compiled.b1}, {&eager.w2, &compiled.w2}, {&eager.b2, &compiled.b2}})
      EXPECT_TRUE(agtest::same_tensor(e->value(), c->value(), tol)) << c->name() << " after step " << i;
  }
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(counts().split - before.split, 1);
  const std::string ir = f.get_concrete_function(x, y).llvm_ir(true);
  const size_t header = ir.find(kHeader);
  ASSERT_NE(header, std::string::npos);
  EXPECT_TRUE(defines_after(ir, header, "@agc_entry.tail")) << "the entry's tail did not move";
}

TEST_F(SplitCompile, OneThreadCompilesBothModulesInTurn) {
  const Threads threads(1);
  const Tensor x = ag::random_uniform({10, 10}, ag::float32, -0.5, 0.5, 14);
  const SplitCounts before = counts();
  agtest::expect_three_way("x^31 (float32)", power, {.rtol = 1e-4, .atol = 1e-6}, x);
  const SplitCounts after = counts();
  EXPECT_EQ(after.split - before.split, 1);
  EXPECT_EQ(after.parallel - before.parallel, 0);
}

TEST_F(SplitCompile, TieredCompilesKeepToTheirOwnThread) {
  const Threads threads(2);
  const Tensor x = ag::random_uniform({10, 10}, ag::int64, -2, 3, 15);
  auto eager = power(x);
  auto f = ag::function(power, {.tiered = true});
  const SplitCounts before = counts();
  EXPECT_TRUE(agtest::same_tensor(eager, f(x)));  // on the interpreter, the compile queued
  ag::detail::wait_for_background_compiles();
  const SplitCounts after = counts();
  EXPECT_EQ(after.split - before.split, 1);
  EXPECT_EQ(after.parallel - before.parallel, 0);
  EXPECT_TRUE(agtest::same_tensor(eager, f(x)));  // the machine code
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST_F(SplitCompile, OffWithAG_JIT_SPLIT) {
  const agtest::ScopedEnv off("AG_JIT_SPLIT", "0");
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 16);
  const SplitCounts before = counts();
  agtest::expect_three_way("x^31 (int32), not split", power, {}, x);
  EXPECT_EQ(counts().split, before.split);
  auto f = ag::function(power);
  EXPECT_EQ(f.get_concrete_function(x).assembly().find(kHeader), std::string::npos);
}

TEST_F(SplitCompile, SmallKernelsStayInTheModule) {
  const Tensor x = ag::random_uniform({2, 2}, ag::int32, -2, 3, 17);
  const SplitCounts before = counts();
  agtest::expect_three_way("2x2 x^31", power, {}, x);
  EXPECT_EQ(counts().split, before.split);
}

TEST_F(SplitCompile, InspectionShowsBothModules) {
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 18);
  auto f = ag::function(power);
  auto c = f.get_concrete_function(x);
  const std::string lowered = c.llvm_ir(false), optimized = c.llvm_ir(true), assembly = c.assembly();
  EXPECT_EQ(lowered.find(kHeader), std::string::npos);  // the module as lowered, before the split
  // The kernel is defined after the header only: before it, in the entry's module, it is declared.
  auto line_of = [&](const char* start) {  // the first line starting with `start` about the kernel
    for (size_t at = optimized.find(std::string("\n") + start); at != std::string::npos;
         at = optimized.find(std::string("\n") + start, at + 1))
      if (optimized.substr(at, optimized.find('\n', at + 1) - at).find("@agc.gemm.") != std::string::npos) return at;
    return std::string::npos;
  };
  const size_t ir_header = optimized.find(kHeader), defined = line_of("define ");
  ASSERT_NE(ir_header, std::string::npos);
  ASSERT_NE(defined, std::string::npos);
  EXPECT_GT(defined, ir_header);
  EXPECT_LT(line_of("declare "), ir_header);
  const size_t asm_header = assembly.find(kHeader), label = assembly.find("\nagc.gemm.");
  ASSERT_NE(asm_header, std::string::npos);
  ASSERT_NE(label, std::string::npos);
  EXPECT_GT(label, asm_header);
}

TEST_F(SplitCompile, ASplitEntryOfTheDiskCacheLoadsInAnotherFunction) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("agc-split-cache-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const agtest::ScopedEnv cache("AG_CACHE_DIR", dir.c_str());
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 19);
  auto first = ag::function(power);
  const Tensor compiled = first(x);
  ASSERT_EQ(first.stats().compiles, 1);
  std::string entry;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".agcobj") {
      std::ifstream in(e.path(), std::ios::binary);
      entry.assign(std::istreambuf_iterator<char>(in), {});
    }
  EXPECT_NE(entry.find("AGCOBJS1"), std::string::npos);  // a bundle of the two objects
  auto second = ag::function(power);
  EXPECT_TRUE(agtest::same_tensor(compiled, second(x)));
  EXPECT_EQ(second.stats().disk_hits, 1);
  EXPECT_EQ(second.stats().compiles, 0);
  fs::remove_all(dir);
}

TEST_F(SplitCompile, BundlesOfObjects) {
  using ag::jit::bundle_objects;
  using ag::jit::unbundle_objects;
  EXPECT_EQ(bundle_objects({"\x7f" "ELF one"}), "\x7f" "ELF one");  // one object stays as it is
  const std::string two = bundle_objects({"first object", "second"});
  const std::vector<std::string_view> parts = unbundle_objects(two);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], "first object");
  EXPECT_EQ(parts[1], "second");
  ASSERT_EQ(unbundle_objects("\x7f" "ELF one").size(), 1u);
  EXPECT_TRUE(unbundle_objects(two.substr(0, two.size() - 1)).empty());  // truncated
  EXPECT_TRUE(unbundle_objects(two.substr(0, 12)).empty());              // a size cut short
}

}  // namespace
