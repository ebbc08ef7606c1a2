// Tiered execution (FunctionOptions::tiered): a new signature's calls run on the interpreter
// while the background thread compiles, then switch to the machine code; one compile per
// signature; eviction during the compile is safe. The compile thread is held at a gate so the
// interpreter phase is certain, not a race the test hopes to win.
#include <atomic>
#include <thread>

#include "compile_hold.h"
#include "engine.h"
#include "function/background_compiler.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

// Integers: the interpreter and compiled code agree exactly.
Tensor int_mix(Tensor n) { return ag::where(n % 2 == 1, 3 * n + 1, n / 2) * 5 - ag::reduce_max(n); }

TEST(Tiered, CallsRunOnTheInterpreterUntilTheCompileIsDoneThenSwitch) {
  agtest::CompileHold gate;
  auto f = ag::function(int_mix, {.name = "tiered_int_mix", .tiered = true});
  const Tensor n = ag::constant({27, 97, 1, 6171});
  const Tensor want = int_mix(n);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(agtest::same_tensor(want, f(n))) << i;
  gate.wait_until_held();
  EXPECT_EQ(f.stats().compiles, 0);
  EXPECT_EQ(f.stats().interpreted_calls, 5);
  gate.open();
  ag::detail::wait_for_background_compiles();
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(agtest::same_tensor(want, f(n))) << i;
  EXPECT_EQ(f.stats().interpreted_calls, 5);  // every later call ran the machine code
  EXPECT_EQ(f.stats().traces, 1);
}

TEST(Tiered, ManyThreadsDuringTheCompileShareOneCompile) {
  agtest::CompileHold gate;
  auto f = ag::function([](Tensor x) { return ag::reduce_sum(x * x, {0}) + 1; }, {.name = "tiered_threads", .tiered = true});
  const Tensor x = ag::constant({1.f, 2.f, 3.f});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (f(x).item<float>() != 15.f) ++wrong;
    });
  gate.wait_until_held();
  gate.open();
  for (auto& th : threads) th.join();
  ag::detail::wait_for_background_compiles();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
  EXPECT_EQ(f(x).item<float>(), 15.f);
}

// evict() while the concrete function compiles: the compile finishes on a function nobody
// holds, which is then freed with its code; the next call traces and compiles again.
TEST(Tiered, EvictionDuringTheCompileIsSafeAndFreesTheCode) {
  auto engine = ag::jit::Engine::get();
  const int64_t before = engine->live_functions();
  {
    agtest::CompileHold gate;
    auto f = ag::function([](Tensor x) { return x * 2.f; }, {.name = "tiered_evict", .tiered = true});
    EXPECT_EQ(f(ag::ones({3})).to_vector<float>(), std::vector<float>(3, 2.f));
    gate.wait_until_held();
    f.evict();
    gate.open();
    ag::detail::wait_for_background_compiles();
    EXPECT_EQ(engine->live_functions(), before);
    EXPECT_EQ(f(ag::ones({3})).to_vector<float>(), std::vector<float>(3, 2.f));  // traced again
    EXPECT_EQ(f.stats().traces, 2);
  }
  ag::detail::wait_for_background_compiles();
  EXPECT_EQ(engine->live_functions(), before);
}

// Inspection compiles (or waits for the compile) whatever the tier.
TEST(Tiered, InspectionShowsTheCompiledCode) {
  auto f = ag::function([](Tensor x) { return ag::exp(x) + 1.f; }, {.name = "tiered_ir", .tiered = true});
  const Tensor x = ag::ones({4});
  f(x);
  EXPECT_NE(f.get_concrete_function(x).llvm_ir(true).find("define"), std::string::npos);
  ag::detail::wait_for_background_compiles();
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

// Without a JIT choice (jit_compile = false) tiered changes nothing: the interpreter throughout.
TEST(Tiered, IsIgnoredWhenTheInterpreterIsChosen) {
  auto f = ag::function([](Tensor x) { return x + 1; }, {.jit_compile = false, .tiered = true});
  f(ag::ones({2}));
  f(ag::ones({2}));
  EXPECT_EQ(f.stats().interpreted_calls, 0);
  EXPECT_EQ(f.stats().compiles, 0);
}

// Destroying a tiered Function waits for the compiles it queued: they must not run on into
// process exit, where LLVM's lazily created statics are already gone (a crash in ~5% of the
// processes whose main returned during their first compile).
TEST(Tiered, DestroyingAFunctionWaitsForItsQueuedCompile) {
  agtest::CompileHold gate;
  auto f = std::make_unique<decltype(ag::function(int_mix))>(
      ag::function(int_mix, {.name = "tiered_destroyed", .tiered = true}));
  (*f)(ag::constant({1, 2}));
  gate.wait_until_held();
  std::atomic<bool> destroyed{false};
  std::thread t([&] {
    f.reset();
    destroyed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(destroyed.load()) << "the Function was destroyed while its compile was still held";
  gate.open();
  t.join();
  EXPECT_TRUE(destroyed.load());
}

}  // namespace
