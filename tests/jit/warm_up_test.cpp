// The JIT's warm-up (docs/jit.md, "Warm-up"): creating the first Function that may compile starts
// it on the background compile thread, once per process; it builds the engine and compiles a
// small module, unless a compile has begun; AG_JIT_WARMUP=0 turns it off; a process that returns
// from main while it runs exits normally. Each case runs tests/jit/cache_helper.cpp in a new
// process (a warm-up happens once per process), with AG_LOG=compile.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ag/ag.h"
#include "engine.h"
#include "helper_process.h"

namespace {

using agtest::HelperRun;
using agtest::run_helper;

constexpr const char* kWarmUpLine = "agc: jit: warm-up (background)";
constexpr const char* kWarmUpCompiled = "a small module optimized and compiled in";

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(WarmUp, RunsOnceBeforeTheFirstCompileWhenTheCallComesLater) {
  // The helper calls the function once the warm-up has finished (it waits for it: a fixed delay
  // failed on a loaded machine).
  const HelperRun r = run_helper("off", 1, "AG_LOG=compile", 3, "warm");
  ASSERT_EQ(r.compiles, 3) << r.log;
  EXPECT_EQ(count_of(r.log, kWarmUpLine), 1) << r.log;
  EXPECT_EQ(count_of(r.log, kWarmUpCompiled), 1) << r.log;
  // It came first and built the engine: the first compile found it.
  const size_t warm = r.log.find(kWarmUpLine), compile = r.log.find("agc: jit: cache_helper: plan + key");
  ASSERT_NE(compile, std::string::npos) << r.log;
  EXPECT_LT(warm, compile) << r.log;
}

TEST(WarmUp, GivesTheSameResults) {
  const HelperRun warm = run_helper("off", 4, "", 2, "100");
  const HelperRun cold = run_helper("off", 4, "AG_JIT_WARMUP=0", 2);
  ASSERT_EQ(warm.compiles, 2) << warm.log;
  ASSERT_EQ(cold.compiles, 2) << cold.log;
  EXPECT_EQ(warm.value, cold.value);
}

TEST(WarmUp, OffWithTheEnvironmentVariable) {
  const HelperRun r = run_helper("off", 1, "AG_LOG=compile AG_JIT_WARMUP=0", 1, "100");
  ASSERT_EQ(r.compiles, 1) << r.log;
  EXPECT_EQ(count_of(r.log, kWarmUpLine), 0) << r.log;
}

TEST(WarmUp, NotForAFunctionThatNeverCompiles) {
  // jit_compile = false: the helper's function runs on the interpreter; its process never warms up.
  const HelperRun r = run_helper("off", 1, "AG_LOG=compile CACHE_HELPER_JIT=0", 1, "100");
  ASSERT_FALSE(r.value.empty()) << r.log;
  EXPECT_EQ(count_of(r.log, kWarmUpLine), 0) << r.log;
  EXPECT_EQ(count_of(r.log, "agc: jit:"), 0) << r.log;
}

TEST(WarmUp, AProcessReturningFromMainWhileItRunsExitsNormally) {
  // The function is destroyed as main returns, during the warm-up: its destructor waits for it,
  // so the warm-up never runs while exit destroys LLVM's statics.
  for (int i = 0; i < 6; ++i) {
    const HelperRun r = run_helper("off", 1, "AG_LOG=compile", 1, "exit");
    EXPECT_EQ(r.log.find("compiles="), std::string::npos) << r.log;  // it returned before calling
    EXPECT_EQ(count_of(r.log, kWarmUpLine), 1) << r.log;             // and the warm-up finished
  }
}

TEST(WarmUp, CompilesNothingOnceACompileHasBegun) {
  auto f = ag::function([](ag::Tensor x) { return x * 2.0f + 1.0f; });
  (void)f(ag::constant({1.0f, 2.0f}));
  const std::shared_ptr<ag::jit::Engine> engine = ag::jit::Engine::get();
  EXPECT_EQ(engine->warm_up(), 0.0);
}

}  // namespace
