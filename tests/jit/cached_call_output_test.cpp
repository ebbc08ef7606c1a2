// A cached call's output tensor: the block of an output the caller dropped (the previous result
// assigned over) is the next call's output, kept whole on the thread (tensor.cpp, "Parked"), so a
// call in a loop allocates nothing (W4, docs/performance.md). An output the caller still holds is
// never reused, and values stay right across the reuse.
#include "jit_test_util.h"

namespace {

using ag::Tensor;

TEST(JitCachedCallOutput, TheBlockOfADroppedOutputIsTheNextCallsOutput) {
  auto f = ag::function([](Tensor x) { return x + 1.0f; });
  const Tensor x = ag::constant({1.0f});
  Tensor sink = f(x);
  const void* first = ag::detail::impl_of(sink);
  sink = f(x);  // allocated while `first` is held; then `first` is dropped and kept
  EXPECT_NE(ag::detail::impl_of(sink), first);
  // A tensor of another shape but the same block size: the free list (last in, first out) would
  // have handed it `first`'s block; a kept block is not on the free list.
  const Tensor other = ag::detail::make_tensor(ag::float32, {3});
  EXPECT_NE(ag::detail::impl_of(other), first);
  sink = f(x);
  EXPECT_EQ(ag::detail::impl_of(sink), first) << "the dropped output's block was not reused";
  EXPECT_EQ(sink.to_vector<float>(), std::vector<float>{2.0f});
  EXPECT_GE(f.stats().inline_hits, 1);
}

TEST(JitCachedCallOutput, HeldOutputsAreNeverReusedAndValuesStayRight) {
  auto f = ag::function([](Tensor x) { return x * 2.0f + 1.0f; });
  std::vector<Tensor> held;
  Tensor sink;
  for (int i = 0; i < 20; ++i) {
    const Tensor x = ag::constant({static_cast<float>(i), static_cast<float>(-i)});
    sink = f(x);
    EXPECT_EQ(sink.to_vector<float>(), (std::vector<float>{2.0f * i + 1.0f, -2.0f * i + 1.0f}));
    if (i % 3 == 0) held.push_back(sink);
  }
  for (size_t k = 0; k < held.size(); ++k) {
    const float i = static_cast<float>(3 * k);
    EXPECT_EQ(held[k].to_vector<float>(), (std::vector<float>{2.0f * i + 1.0f, -2.0f * i + 1.0f})) << k;
    for (size_t j = 0; j < k; ++j) EXPECT_NE(ag::detail::impl_of(held[k]), ag::detail::impl_of(held[j]));
  }
}

}  // namespace
