// Concurrency: 8 threads calling one Function with mixed signatures compile each signature exactly
// once and all get correct results; 8 threads compiling 8 Functions at once link them right, also
// in new processes; eviction and destruction free code while calls continue.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <unistd.h>

#include "jit_test_util.h"
#include "test_data.h"

namespace {

ag::Tensor work(ag::Tensor x) { return ag::reduce_sum(ag::tanh(x) * 2.0f + ag::relu(x), {0}) + ag::cast(ag::shape_of(x)[0], ag::float32); }

TEST(JitConcurrency, EightThreadsMixedSignaturesOneCompileEach) {
  auto f = ag::function(work);
  constexpr int kThreads = 8, kSignatures = 4, kCalls = 150;
  std::vector<ag::Tensor> inputs, expected;
  for (int s = 0; s < kSignatures; ++s) {
    inputs.push_back(agtest::sample(ag::float32, {s + 1, 3}, static_cast<uint64_t>(s), agtest::Values::Moderate));
    expected.push_back(work(inputs.back()));
  }
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const int s = (t + c) % kSignatures;
        try {
          if (!agtest::same_tensor(expected[s], f(inputs[s]))) mismatches.fetch_add(1);
        } catch (...) {
          errors.fetch_add(1);
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  const ag::FunctionStats st = f.stats();
  EXPECT_EQ(st.traces, kSignatures);
  EXPECT_EQ(st.compiles + st.disk_hits, kSignatures);
}

TEST(JitConcurrency, DifferentFunctionsCompileInParallel) {
  constexpr int kThreads = 8;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto g = ag::function([t](ag::Tensor x) { return ag::matmul(x, ag::transpose(x)) * static_cast<float>(t) + ag::exp(x[0]); });
      const ag::Tensor x = agtest::sample(ag::float32, {4, 4}, static_cast<uint64_t>(t), agtest::Values::Moderate);
      for (int c = 0; c < 20; ++c)
        if (!agtest::same_tensor(ag::matmul(x, ag::transpose(x)) * static_cast<float>(t) + ag::exp(x[0]), g(x), {.rtol = 1e-4, .atol = 1e-4}))
          mismatches.fetch_add(1);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// The test above in 16 new processes, every other one sharing a disk cache (the first of those
// compiles, the others link objects loaded from it) and the rest compiling: where both races it
// found happened, at a process's first compiles.
// A function's matmul kernel compiles as a second object, and its entry was returned before
// that object was executable (a jump into unmapped memory: 1 process in 4 with the cache);
// and exp's vector variant was defined twice in the runtime's symbols while libmvec opened
// ("Duplicate definition of symbol '_ZGVbN4v_expf'", an InternalError: 1 in 15 without it).
TEST(JitConcurrency, NewProcessesCompileFunctionsConcurrently) {
  namespace fs = std::filesystem;
  const std::string self = fs::canonical("/proc/self/exe").string();
  const fs::path dir = fs::temp_directory_path() / ("agc-concurrent-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (int k = 0; k < 16; ++k) {
    const std::string cmd = "AG_CACHE_DIR='" + (k % 2 ? std::string("off") : dir.string()) + "' '" + self +
                            "' --gtest_filter=JitConcurrency.DifferentFunctionsCompileInParallel --gtest_brief=1 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0) << "process " << k << ":\n" << out;
  }
  EXPECT_FALSE(fs::is_empty(dir));  // the later processes loaded from the cache
  fs::remove_all(dir);
}

TEST(JitConcurrency, EvictionFreesCodeAndRecompiles) {
  auto f = ag::function(work, {.max_cached = 2});
  for (int round = 0; round < 3; ++round)
    for (int n = 1; n <= 4; ++n) {
      const ag::Tensor x = agtest::sample(ag::float32, {n, 2}, static_cast<uint64_t>(n), agtest::Values::Moderate);
      EXPECT_TRUE(agtest::same_tensor(work(x), f(x)));
    }
  EXPECT_GT(f.stats().evictions, 0);
  f.evict();
  const ag::Tensor x = agtest::sample(ag::float32, {2, 2}, 9, agtest::Values::Moderate);
  EXPECT_TRUE(agtest::same_tensor(work(x), f(x)));
}

}  // namespace
