// Compiled code lives as long as its concrete function: evicting it (LRU or evict()) or
// destroying its Function removes its JITDylib from the engine, unless a ConcreteFunction still
// holds it. White-box: counts the engine's live per-function JITDylibs.
#include <atomic>
#include <thread>

#include "../common/evict_after_inline_hits.h"
#include "engine.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

int64_t live() { return ag::jit::Engine::get()->live_functions(); }

TEST(JitCodeLifetime, EvictionAndDestructionRemoveTheCode) {
  auto engine = ag::jit::Engine::get();  // keeps one engine for the whole test
  const int64_t before = live();
  {
    auto f = ag::function([](Tensor x) { return x * 2.f + 1.f; }, {.name = "lifetime"});
    f(ag::ones({3}));
    f(ag::ones({4}));
    EXPECT_EQ(live(), before + 2);
    f.evict();
    EXPECT_EQ(live(), before);
    f(ag::ones({5}));  // traced and compiled again
    EXPECT_EQ(live(), before + 1);
  }  // the Function is destroyed with its cache
  EXPECT_EQ(live(), before);
}

TEST(JitCodeLifetime, LruEvictionRemovesTheLeastRecentlyUsedCode) {
  auto engine = ag::jit::Engine::get();
  const int64_t before = live();
  auto f = ag::function([](Tensor x) { return ag::exp(x); }, {.name = "lru", .max_cached = 2});
  ag::set_log_sink([](std::string_view) {});  // the retrace warning this loop earns on purpose
  for (int64_t n = 1; n <= 6; ++n) {
    EXPECT_TRUE(agtest::same_tensor(ag::exp(ag::ones({n})), f(ag::ones({n}))));
    EXPECT_EQ(live(), before + std::min<int64_t>(n, 2)) << n;
  }
  ag::set_log_sink(nullptr);
  EXPECT_EQ(f.stats().evictions, 4);
}

TEST(JitCodeLifetime, AConcreteFunctionKeepsItsCodeAfterEviction) {
  auto engine = ag::jit::Engine::get();
  const int64_t before = live();
  auto f = ag::function([](Tensor x) { return x - 1.f; }, {.name = "held"});
  {
    auto c = f.get_concrete_function(ag::TensorSpec({2}, ag::float32));
    EXPECT_TRUE(agtest::same_tensor(ag::constant({0.f, 1.f}), c(ag::constant({1.f, 2.f}))));  // compiles
    EXPECT_EQ(live(), before + 1);
    f.evict();
    EXPECT_EQ(live(), before + 1);  // c still runs it
    EXPECT_TRUE(agtest::same_tensor(ag::constant({2.f, 3.f}), c(ag::constant({3.f, 4.f}))));
  }
  EXPECT_EQ(live(), before);
}

// Calls served by the inline cache hold their code through a hazard slot, not a reference:
// after threads call in bursts while the Function evicts, evict() still frees every piece of
// code (none is left retired once no call runs).
TEST(JitCodeLifetime, InlineCachedCallsUnderEvictionLeaveNoCodeBehind) {
  auto engine = ag::jit::Engine::get();
  const int64_t before = live();
  auto f = ag::function([](Tensor x) { return x * 2.f; }, {.name = "inline_lifetime", .max_cached = 2});
  ag::set_log_sink([](std::string_view) {});
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const int64_t n = 1 + (i / 20 + t) % 3;
        if (f(ag::ones({n})).to_vector<float>() != std::vector<float>(static_cast<size_t>(n), 2.f)) ++wrong;
      }
    });
  const int rounds_with_hits = agtest::evict_after_inline_hits(f, 20);
  stop = true;
  for (auto& th : threads) th.join();
  ag::set_log_sink(nullptr);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(rounds_with_hits, 20);
  f.evict();
  EXPECT_EQ(live(), before);
}

}  // namespace
