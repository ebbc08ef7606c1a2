// Compiled loops on two threads, measured (ag/detail/loop_splits.h, AG_LOOP_SPLITS=measure): a
// loop's first calls run split, then whole, one decision is taken and logged (AG_LOG=kernels),
// the loop then runs the way decided (split every call, or never), and every call, trial or
// not, gives the one-thread bits; AG_LOOP_SPLITS=0 never splits. In a staged loop (one decision for its body's
// loop, whatever the iteration), and under a tape inside the trace.
#include <string>

#include "../common/log_capture.h"
#include "jit_test_util.h"
#include "loop_splits_mode.h"

namespace {

using ag::Tensor;
using ag::detail::LoopSplitsChooser;
using ag::detail::LoopSplitsMode;
using Threads = ag::detail::ScopedNumThreads;

constexpr int kTrialCalls = 2 * LoopSplitsChooser::kTrialsPerSide;

int64_t decisions() {
  const LoopSplitsChooser::Decisions d = ag::detail::loop_splits_chooser().decisions();
  return d.split + d.whole;
}

TEST(JitLoopSplits, ALoopsFirstCallsTryBothWaysThenItKeepsTheFaster) {
  const agtest::ScopedLoopSplits measured(LoopSplitsMode::Measure);
  const agtest::LogCapture log(ag::detail::LogTopic::Kernels);
  const Tensor x = ag::random_uniform({(1 << 18) + 5}, ag::float32, -3, 3, 21);
  auto fn = [](Tensor v) { return ag::relu(v * 1.5f + 0.25f) * 0.5f - ag::tanh(v); };
  auto f = ag::function(fn);
  Tensor one;
  {
    Threads t(1);
    one = f(x);  // one thread: no trial
  }
  Threads two(2);
  const int64_t decided = decisions(), before = ag::detail::parallel_loops_split();
  for (int i = 0; i < kTrialCalls; ++i) ASSERT_EQ(f(x).to_vector<float>(), one.to_vector<float>()) << "trial call " << i;
  EXPECT_EQ(ag::detail::parallel_loops_split() - before, LoopSplitsChooser::kTrialsPerSide) << "half of the trial's calls split";
  ASSERT_EQ(decisions(), decided + 1) << "one decision for the loop";
  const std::string lines = log.text();
  EXPECT_EQ(agtest::occurrences(lines, "(best of 6 each) -> "), 1) << lines;
  EXPECT_EQ(agtest::occurrences(lines, "agc: compiled loop "), 1) << lines;
  const bool split = lines.find("-> split") != std::string::npos;
  const int64_t after_trial = ag::detail::parallel_loops_split();
  for (int i = 0; i < 20; ++i) ASSERT_EQ(f(x).to_vector<float>(), one.to_vector<float>()) << "call " << i << " after the trial";
  EXPECT_EQ(ag::detail::parallel_loops_split() - after_trial, split ? 20 : 0) << lines;
  EXPECT_EQ(decisions(), decided + 1);
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

// A staged loop's body loop is one loop to the trial: its iterations are its calls. Under a tape
// inside the trace, the gradient's loop is a loop of its own. Both give the one-thread bits on
// two threads, and no more decisions than loops.
TEST(JitLoopSplits, AStagedLoopAndAGradientKeepTheOneThreadBits) {
  const agtest::ScopedLoopSplits measured(LoopSplitsMode::Measure);
  auto iterate = [](Tensor v, Tensor steps) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     v = ag::tanh(v * 0.9f + 0.05f);
                     i += 1;
                   },
                   ag::state(v, i), {"v", "i"}, AG_SOURCE_LOC("loop_splits_test.cpp", 74));
    ag::GradientTape tape;
    tape.watch(v);
    const Tensor loss = ag::reduce_sum(ag::square(ag::sin(v)));
    return std::tuple{v, tape.gradient(loss, v)};
  };
  const Tensor x = ag::random_uniform({1 << 18}, ag::float32, -2, 2, 22);
  const Tensor steps = ag::constant(3 * kTrialCalls);
  auto f = ag::function(iterate);
  std::tuple<Tensor, Tensor> one;
  {
    Threads t(1);
    one = f(x, steps);
  }
  agtest::expect_same(iterate(x, steps), one, {.rtol = 1e-6, .atol = 1e-6}, "one thread against eager");
  Threads two(2);
  const int64_t decided = decisions();
  for (int call = 0; call < 3; ++call) agtest::expect_same(one, f(x, steps), {.rtol = 0, .atol = 0}, "call " + std::to_string(call));
  EXPECT_GE(decisions(), decided + 1) << "the body's loop decided within the first call";
  EXPECT_LE(decisions(), decided + 4) << "one decision per loop, not per iteration";
}

TEST(JitLoopSplits, NeverRunsEveryLoopOnTheCallingThread) {
  const Tensor x = ag::random_uniform({(1 << 18) + 5}, ag::float32, -3, 3, 23);
  auto f = ag::function([](Tensor v) { return ag::exp(v * 0.5f) - v; });
  Tensor one;
  {
    Threads t(1);
    one = f(x);
  }
  Threads two(2);
  {
    const agtest::ScopedLoopSplits never(LoopSplitsMode::Never);
    const int64_t before = ag::detail::parallel_loops_split();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f(x).to_vector<float>(), one.to_vector<float>()) << "call " << i;
    EXPECT_EQ(ag::detail::parallel_loops_split(), before);
  }
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(x).llvm_ir(true), "agc_rt_parallel_for")) << "a loop the pool could split";
}

}  // namespace
