// The cached-call path builds no std::vector, std::string or std::function (docs/performance.md,
// the cached call: no heap allocation beyond the outputs), with container arguments too. Counts
// calls of the global operator new(size_t) on this thread while a window is open; tensor storage
// comes from the runtime's own block caches (aligned operator new, not counted), which a
// warmed-up loop reuses.
#include <cstdlib>
#include <new>

#include "test_util.h"

// GCC sees std::free in the replaced operator delete and, not knowing that the replaced operator
// new is malloc, warns that they mismatch wherever a delete is inlined into this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
thread_local bool t_counting = false;
thread_local long t_news = 0;
}  // namespace

void* operator new(size_t n) {
  if (t_counting) ++t_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace {

using ag::Tensor;

// operator new calls made by 100 calls of `call` after 10 warm-up calls.
template <class F>
long news_in_cached_calls(F&& call) {
  for (int i = 0; i < 10; ++i) call();
  t_news = 0;
  t_counting = true;
  for (int i = 0; i < 100; ++i) call();
  t_counting = false;
  return t_news;
}

TEST(CachedCallAllocations, NoneForTensorsContainersOfTensorsAndVectorsOfNumbers) {
  const Tensor x = ag::constant({1.f, 2.f});
  auto one = ag::function([](Tensor a) { return a + 1.f; }, agtest::interpreted());
  auto list = ag::function([](const std::vector<Tensor>& ws) { return ws[0] + ws[1] + ws[2]; }, agtest::interpreted());
  auto array = ag::function([](std::array<Tensor, 2> ab) { return ab[0] * ab[1]; }, agtest::interpreted());
  auto numbers = ag::function([](Tensor a, std::vector<int> ks) { return a * static_cast<float>(ks[0] + ks[1]); },
                              agtest::interpreted());
  const std::vector<Tensor> ws = {x, x, x};
  const std::array<Tensor, 2> ab = {x, x};
  const std::vector<int> ks = {2, 3};
  // The control: a single-tensor call allocates nothing, so the counter can see an allocation.
  EXPECT_EQ(news_in_cached_calls([&] { (void)one(x); }), 0);
  EXPECT_GE(news_in_cached_calls([&] {
              std::vector<int> v(3);
              asm volatile("" : : "r"(v.data()) : "memory");  // keeps the allocation
            }),
            100);
  EXPECT_EQ(news_in_cached_calls([&] { (void)list(ws); }), 0);
  EXPECT_EQ(news_in_cached_calls([&] { (void)array(ab); }), 0);
  EXPECT_EQ(news_in_cached_calls([&] { (void)numbers(x, ks); }), 0);
  const auto concrete = list.get_concrete_function(ws);
  EXPECT_EQ(news_in_cached_calls([&] { (void)concrete(ws); }), 0);
  EXPECT_EQ(list.tracing_count(), 1);
}

}  // namespace
