// fork() in a process that uses agc (runtime/internal/ag/detail/fork_safety.h): the child runs
// compiled code, compiles, and uses the pool (whose workers it does not have) without hanging;
// a fork waits for a trace or a background compile in progress on another thread, so the child
// never finds its locks taken; a background compile still queued at the fork runs in the child.
// Each child reports through its exit status; one that hangs is killed and the test fails.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "ag/detail/parallel.h"
#include "compile_hold.h"
#include "function/background_compiler.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

constexpr int kHung = -1;

// Forks; the child runs `body` and exits with its status (0: all checks held). The parent calls
// `forked` as soon as fork() returns, then waits up to 60 s: the status, or kHung (the child is
// killed).
int in_child(const std::function<int()>& body, const std::function<void()>& forked = [] {}) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    int status = 99;
    try {
      status = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    std::fflush(nullptr);
    _exit(status);
  }
  if (pid < 0) return -2;
  forked();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int st = 0;
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return kHung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 98;
}

bool same(const Tensor& a, const Tensor& b) { return agtest::same_tensor(a, b, {.rtol = 0, .atol = 0}); }

Tensor chain(Tensor x) { return ag::relu(x * 2.0f + 1.0f) - ag::tanh(x); }

TEST(Fork, TheChildCompilesRunsCodeAndUsesThePool) {
  const ag::detail::ScopedNumThreads two(2);
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  auto f = ag::function(chain);
  const Tensor x = ag::random_uniform({1 << 20}, ag::float32, -2, 2, 1);  // large: loops over the pool
  const Tensor parent_result = f(x);
  const Tensor parent_eager = ag::relu(x * 3.0f);
  ASSERT_GE(ag::detail::parallel_loops_split(), 1) << "the pool never ran: nothing to lose in the child";
  const int status = in_child([&] {
    if (!same(f(x), parent_result)) return 1;  // compiled code from the parent
    auto g = ag::function([](Tensor a) { return ag::maximum(a * 0.5f, -1.0f) + a; });
    const Tensor expected = ag::maximum(x * 0.5f, -1.0f) + x;  // eager, over the child's pool
    if (!same(g(x), expected)) return 2;                      // a new compile in the child
    if (g.stats().compiles != 1) return 3;
    if (!same(ag::relu(x * 3.0f), parent_eager)) return 4;
    return 0;
  });
  EXPECT_EQ(status, 0) << (status == kHung ? "the child hung" : "a check failed in the child");
  EXPECT_TRUE(same(f(x), parent_result)) << "the parent after the fork";
}

TEST(Fork, WaitsForATraceInProgressOnAnotherThread) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  std::mutex mu;
  std::condition_variable changed;
  bool tracing = false;
  auto slow = ag::function([&](Tensor a) {
    {
      std::lock_guard lock(mu);
      tracing = true;
    }
    changed.notify_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the fork comes meanwhile
    return a * 3.0f + 1.0f;
  });
  const Tensor x = ag::constant({1.0f, 2.0f});
  std::thread tracer([&] { slow(x); });
  {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return tracing; });
  }
  // The trace holds the signature's pending entry: a child forked in the middle of it would wait
  // for a trace that no thread of its own finishes.
  const int status = in_child([&] { return same(slow(x), ag::constant({4.0f, 7.0f})) && slow.stats().traces == 1 ? 0 : 1; });
  tracer.join();
  EXPECT_EQ(status, 0) << (status == kHung ? "the child hung" : "a check failed in the child");
}

TEST(Fork, BackgroundCompilesFinishFirstAndQueuedOnesRunInTheChild) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  auto first = ag::function([](Tensor a) { return a * 2.0f - 1.0f; }, {.name = "fork_first", .tiered = true});
  auto second = ag::function([](Tensor a) { return a * a + 5.0f; }, {.name = "fork_second", .tiered = true});
  const Tensor x = ag::constant({1.0f, 2.0f, 3.0f});
  int status = 0;
  {
    agtest::CompileHold hold;
    first(x);  // queued, and the compiler takes it: held before compiling it
    hold.wait_until_held();
    second(x);  // queued behind it
    std::atomic<bool> forked{false};
    std::thread forker([&] {
      status = in_child([&] {
        // `first` was compiled before the fork; `second`, still queued, compiles here.
        ag::detail::wait_for_background_compiles();
        if (first.stats().compiles != 1 || second.stats().compiles != 1) return 1;
        if (!same(first(x), x * 2.0f - 1.0f) || !same(second(x), x * x + 5.0f)) return 2;
        return second.stats().interpreted_calls == 1 ? 0 : 3;  // the call after the compile ran the code
      }, [&] { forked = true; });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(forked) << "fork() did not wait for the background compile in progress";
    hold.open();
    forker.join();
  }
  EXPECT_EQ(status, 0) << (status == kHung ? "the child hung" : "a check failed in the child");
}

}  // namespace
