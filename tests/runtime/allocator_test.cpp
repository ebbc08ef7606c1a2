// Tensor memory: 64-byte alignment at every size class, blocks reused after free without
// corrupting live tensors, and tensors created on one thread and freed on another (also after
// the creating thread has exited and given back its cached blocks).
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

TEST(Allocator, LargeBuffersAreReusedWithoutStaleValues) {
  const int64_t n = 1 << 20;  // 4 MB: the caching pool
  { const ag::Tensor a = ag::ones({n}); }
  const ag::Tensor b = ag::zeros({n});  // may reuse a's block: it must be zeros, not ones
  EXPECT_EQ(ag::reduce_sum(b).item<float>(), 0.f);
  const ag::Tensor c = ag::fill({n}, 2.f);
  EXPECT_EQ(ag::reduce_max(c).item<float>(), 2.f);
  EXPECT_EQ(ag::reduce_min(c).item<float>(), 2.f);
}

}  // namespace
