// Tensor memory: 64-byte alignment at every size class, blocks reused after free without
// corrupting live tensors, and tensors created on one thread and freed on another (also after
// the creating thread has exited and given back its cached blocks). Large blocks: reused on
// the thread that freed them (the per-thread front cache), handed to other threads when it
// exits, 2 MB aligned for transparent huge pages; ag::release_cached_memory gives them back.
// A dropped small tensor is kept whole for the next one of its dtype and shape on its thread,
// never while a view still holds its buffer.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "test_util.h"

namespace {

TEST(Allocator, EverySizeIsAlignedAndKeepsItsValues) {
  // Sizes across the small-block classes, the aligned-new range and the pooled range.
  std::vector<ag::Tensor> live;
  for (int64_t n : {0, 1, 3, 15, 16, 17, 100, 1000, 1023, 1024, 5000, 65535, 65536, 70000, 300000}) {
    const ag::Tensor t = ag::range(0.f, static_cast<float>(n), 1.f);
    ASSERT_EQ(t.num_elements(), n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data<float>()) % 64, 0u) << n;
    live.push_back(t);
  }
  // Churn: allocate and free many tensors of the same sizes; the live ones must not change.
  for (int round = 0; round < 50; ++round)
    for (const ag::Tensor& t : live) (void)(t * 2 + 1);
  for (const ag::Tensor& t : live) {
    const auto v = t.to_vector<float>();
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<float>(i));
  }
}

TEST(Allocator, TensorsCrossThreads) {
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::vector<ag::Tensor>> made(kThreads);
  {
    std::vector<std::thread> workers;
    for (int w = 0; w < kThreads; ++w)
      workers.emplace_back([w, &made] {
        for (int i = 0; i < kPerThread; ++i) {
          ag::Tensor t = ag::fill({1 + i % 7}, static_cast<float>(w * kPerThread + i));
          ag::Tensor scratch = t + t;  // freed on this thread, into its cache
          (void)scratch;
          made[w].push_back(t);
        }
      });
    for (auto& t : workers) t.join();  // the workers' caches are gone now
  }
  for (int w = 0; w < kThreads; ++w)
    for (int i = 0; i < kPerThread; ++i) {
      const ag::Tensor& t = made[w][i];
      ASSERT_EQ(t.num_elements(), 1 + i % 7);
      ASSERT_EQ(t.to_vector<float>()[0], static_cast<float>(w * kPerThread + i));
    }
  // Freed here, on the main thread; and main-thread tensors freed on a worker.
  made.clear();
  std::vector<ag::Tensor> mine;
  for (int i = 0; i < 1000; ++i) mine.push_back(ag::fill({3}, i));
  std::thread([&] { mine.clear(); }).join();
  const ag::Tensor after = ag::fill({3}, 7) + 1;
  EXPECT_EQ(after.to_vector<int32_t>(), (std::vector<int32_t>{8, 8, 8}));
}

TEST(Allocator, ADroppedSmallTensorIsReusedWholeForTheSameDtypeAndShape) {
  using ag::detail::make_tensor;
  ag::Tensor a = make_tensor(ag::float32, {3});
  const void* header = ag::detail::impl_of(a);
  const float* data = a.data<float>();
  a = ag::Tensor();
  // A tensor of another shape but the same block size: the free list would have handed it a's
  // block (last in, first out); a kept block is not on the free list.
  const ag::Tensor other = make_tensor(ag::float32, {2});
  EXPECT_NE(ag::detail::impl_of(other), header) << "the dropped tensor's block went back to the free list";
  ag::Tensor b = make_tensor(ag::float32, {3});
  EXPECT_EQ(ag::detail::impl_of(b), header) << "the dropped tensor's block was not reused";
  EXPECT_EQ(b.data<float>(), data);
  EXPECT_EQ(ag::detail::impl_of(b)->refs.load(), 1);
  const ag::Tensor live = make_tensor(ag::float32, {3});  // b still alive: a fresh block
  EXPECT_NE(ag::detail::impl_of(live), ag::detail::impl_of(b));
  b = ag::Tensor();
  EXPECT_NE(ag::detail::impl_of(make_tensor(ag::float32, {4})), header) << "reused for another shape";
  // That [4] is the one kept now; [3] float32 and [4] int32 do not get it.
  const void* four = ag::detail::impl_of(make_tensor(ag::float32, {4}));
  EXPECT_NE(ag::detail::impl_of(make_tensor(ag::int32, {4})), four) << "reused for another dtype";
  // Copies share the header: it is kept only when the last one goes.
  ag::Tensor c = make_tensor(ag::int64, {2, 2});
  const void* c_header = ag::detail::impl_of(c);
  ag::Tensor copy = c;
  c = ag::Tensor();
  EXPECT_NE(ag::detail::impl_of(make_tensor(ag::int64, {2, 2})), c_header);
  static_cast<int64_t*>(ag::detail::impl_of(copy)->data)[3] = 42;
  EXPECT_EQ(copy.to_vector<int64_t>()[3], 42);
}

TEST(Allocator, ABufferAViewStillHoldsIsNotReused) {
  ag::Tensor t = ag::fill({6}, 5.0f) + 0.0f;
  const ag::Tensor view = ag::reshape(t, {2, 3});
  ASSERT_EQ(view.data<float>(), t.data<float>()) << "reshape did not view its operand";
  const void* header = ag::detail::impl_of(t);
  t = ag::Tensor();  // the view keeps the storage alive
  const ag::Tensor next = ag::detail::make_tensor(ag::float32, {6});
  EXPECT_NE(ag::detail::impl_of(next), header);
  EXPECT_NE(next.data<float>(), view.data<float>());
  std::fill_n(static_cast<float*>(ag::detail::impl_of(next)->data), 6, -1.0f);
  EXPECT_EQ(view.to_vector<float>(), std::vector<float>(6, 5.0f));
}

TEST(Allocator, ATensorKeptByAnExitingThreadIsFreed) {
  // The worker drops its last tensor (kept for reuse) and exits: its reaper frees the block (a
  // leak or a double free is what the ASan run of this suite would report).
  const void* header = nullptr;
  std::thread([&] {
    ag::Tensor t = ag::detail::make_tensor(ag::float32, {5});
    header = ag::detail::impl_of(t);
    t = ag::Tensor();
    const ag::Tensor other = ag::detail::make_tensor(ag::float32, {4});  // as above: not t's block
    EXPECT_NE(ag::detail::impl_of(other), header);
    t = ag::detail::make_tensor(ag::float32, {5});
    EXPECT_EQ(ag::detail::impl_of(t), header);
  }).join();
  EXPECT_NE(header, nullptr);
}

TEST(Allocator, LargeBuffersAreReusedWithoutStaleValues) {
  const int64_t n = 1 << 20;  // 4 MB: the caching pool
  { const ag::Tensor a = ag::ones({n}); }
  const ag::Tensor b = ag::zeros({n});  // may reuse a's block: it must be zeros, not ones
  EXPECT_EQ(ag::reduce_sum(b).item<float>(), 0.f);
  const ag::Tensor c = ag::fill({n}, 2.f);
  EXPECT_EQ(ag::reduce_max(c).item<float>(), 2.f);
  EXPECT_EQ(ag::reduce_min(c).item<float>(), 2.f);
}

const void* data_of(const ag::Tensor& t) { return t.data<float>(); }

TEST(Allocator, LargeBlocksAreReusedOnEachThreadAcrossCalls) {
  // Each thread frees and allocates the same large size, as a loop or repeated Function calls
  // do: it gets its own block back every time (no other thread's, no new mapping).
  constexpr int kThreads = 4, kRounds = 20;
  constexpr int64_t n = 1 << 20;  // 4 MB
  std::atomic<int> not_reused{0}, wrong{0};
  auto f = ag::function([](ag::Tensor x) { return x * 2.f; }, {.jit_compile = false});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const ag::Tensor x = ag::fill({n}, static_cast<float>(t));
      const void* first = nullptr;
      for (int r = 0; r < kRounds; ++r) {
        const ag::Tensor y = f(x);  // the previous round's output was freed on this thread
        if (r == 0) first = data_of(y);
        else if (data_of(y) != first) ++not_reused;
        if (y.to_vector<float>()[static_cast<size_t>(n - 1)] != 2.f * t) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(not_reused, 0);
  EXPECT_EQ(wrong, 0);
}

TEST(Allocator, LargeBlocksOfAnExitedThreadAreReusedByOthers) {
  constexpr int64_t n = 2900000;  // 11.6 MB: a size class no other allocation here uses
  const void* freed = nullptr;
  std::thread([&] {
    const ag::Tensor t = ag::zeros({n});
    freed = data_of(t);
  }).join();  // the block went to the thread's front cache, then to the shared pool at exit
  const ag::Tensor mine = ag::zeros({n});
  EXPECT_EQ(data_of(mine), freed);
  EXPECT_EQ(ag::reduce_max(mine).item<float>(), 0.f);
}

TEST(Allocator, BlocksOfTwoMegabytesOrMoreAreHugePageAligned) {
  for (int64_t n : {int64_t{1} << 19, int64_t{3} << 19, int64_t{1} << 22}) {  // 2, 6, 16 MB
    const ag::Tensor t = ag::ones({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data_of(t)) % (uintptr_t{2} << 20), 0u) << n;
    EXPECT_EQ(ag::reduce_min(t).item<float>(), 1.f);
  }
}

TEST(Allocator, ReleaseCachedMemoryEmptiesThePoolAndEveryThreadsCache) {
  constexpr int64_t n = 1 << 20;  // 4 MB
  {
    const ag::Tensor t = ag::zeros({n});
    EXPECT_GE(ag::memory_stats().live_bytes, size_t{4} << 20);
  }
  EXPECT_GE(ag::memory_stats().cached_bytes, size_t{4} << 20);  // kept for reuse

  // Another thread keeps a block in its own cache and waits; the release empties that cache at
  // the thread's next large allocation.
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;
  size_t other_cached_before = 0, other_cached_after = 0;
  std::thread other([&] {
    { const ag::Tensor t = ag::zeros({3 * n}); }  // 12 MB, now in this thread's cache
    other_cached_before = ag::memory_stats().cached_bytes;
    std::unique_lock lock(mu);
    stage = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return stage == 2; });
    const ag::Tensor u = ag::zeros({n / 2});  // 2 MB: a size nobody cached
    other_cached_after = ag::memory_stats().cached_bytes;
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return stage == 1; });
  }
  ag::release_cached_memory();
  EXPECT_EQ(ag::memory_stats().cached_bytes, 0u);  // the pool and this thread's cache
  {
    std::lock_guard lock(mu);
    stage = 2;
  }
  cv.notify_all();
  other.join();
  EXPECT_GE(other_cached_before, size_t{12} << 20);
  EXPECT_EQ(other_cached_after, 0u);  // its 12 MB block was unmapped, not kept
  // Allocation works as before after a release, and values are right.
  const ag::Tensor again = ag::ones({n});
  EXPECT_EQ(ag::reduce_sum(again).item<float>(), static_cast<float>(n));
}

}  // namespace
