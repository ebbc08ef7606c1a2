// Thread safety of Functions: each signature traced exactly once under concurrent calls, the
// cached path shared by many threads, Variables updated atomically.
#include <atomic>
#include <thread>

#include "test_util.h"

namespace {

using ag::Tensor;

TEST(Concurrency, EightThreadsMixedSignaturesTraceEachOnce) {
  std::atomic<int> traces{0};
  auto f = ag::function(
      [&](Tensor x) {
        ++traces;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // widen the race window
        return ag::reduce_sum(x * 2);
      },
      agtest::interpreted());
  constexpr int kThreads = 8, kSignatures = 5, kCalls = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const int n = 1 + (i + t) % kSignatures;
        const float got = f(ag::ones({n})).item<float>();
        if (got != 2.f * n) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(traces, kSignatures);
  EXPECT_EQ(f.tracing_count(), kSignatures);
  EXPECT_EQ(f.stats().memory_hits, kThreads * kCalls - kSignatures);
}

// Hits are counted per thread without locked instructions (StripedCounter): more threads than
// stripes fall back to a shared counter, and stripes of exited threads pass to new ones. Every
// hit must still be counted exactly once.
TEST(Concurrency, HitCountIsExactWithMoreThreadsThanStripesAndThreadTurnover) {
  auto f = ag::function([](Tensor x) { return x * 3; }, agtest::interpreted());
  const Tensor x = ag::ones({2});
  f(x);  // the trace; every later call is a hit
  constexpr int kWaves = 3, kThreadsPerWave = 40, kCalls = 50;
  std::atomic<int> wrong{0};
  for (int wave = 0; wave < kWaves; ++wave) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreadsPerWave; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < kCalls; ++i)
          if (f(x).to_vector<float>() != std::vector<float>{3.f, 3.f}) ++wrong;
      });
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f.stats().memory_hits, kWaves * kThreadsPerWave * kCalls);
}

TEST(Concurrency, EvictionWhileOtherThreadsCall) {
  auto f = ag::function([](Tensor x) { return x + 1; }, {.jit_compile = false, .max_cached = 2});
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const int n = 1 + (i * 7 + t) % 6;  // 6 signatures over a cache of 2: constant eviction
        if (f(ag::zeros({n})).num_elements() != n) ++wrong;
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  f.evict();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(f.stats().evictions, 0);
}

TEST(Concurrency, VariableAssignAddIsAtomicPerCall) {
  ag::Variable counter(Tensor(0));
  auto f = ag::function([&]() { return counter.assign_add(1); }, agtest::interpreted());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) f();
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter.value().item<int>(), 2000);
}

TEST(Concurrency, TracingOnSeveralThreadsAtOnceIsIndependent) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto f = ag::function(
          [t](Tensor x) {
            Tensor acc = 0;
            ag::while_stmt([&] { return x > 0; },
                           [&] {
                             acc = acc + t;
                             x = x - 1;
                           },
                           ag::state(acc, x), {"acc", "x"}, AG_SOURCE_LOC("c.cpp", 1));
            return acc;
          },
          agtest::interpreted());
      for (int i = 0; i < 20; ++i)
        if (f(Tensor(i)).item<int>() != t * i) ++wrong;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
}

}  // namespace
