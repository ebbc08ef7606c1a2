// Eager elementwise kernels on the shared thread pool: large ops split into chunks give the
// serial result bit for bit whatever the thread count, errors raised in a chunk reach the
// caller, and set_num_threads checks its argument.
#include "ag/detail/parallel.h"
#include "test_util.h"

namespace {

using ag::Tensor;

using Threads = ag::detail::ScopedNumThreads;

Tensor chain(const Tensor& x, const Tensor& y) {
  return ag::tanh(x) * 2.5f + ag::maximum(y, x) - ag::exp(-ag::abs(x)) / (ag::abs(y) + 1.f);
}

TEST(ParallelKernels, LargeOpsSplitAndMatchTheSerialResultBitForBit) {
  const int64_t n = (1 << 18) + 37;  // not a multiple of any chunk
  const Tensor x = ag::random_uniform({n}, ag::float32, -3, 3, 1), y = ag::random_uniform({n}, ag::float32, -3, 3, 2);
  Tensor serial;
  {
    Threads one(1);
    const int64_t before = ag::detail::parallel_loops_split();
    serial = chain(x, y);
    EXPECT_EQ(ag::detail::parallel_loops_split(), before);
  }
  for (int threads : {2, 3, 4}) {
    Threads t(threads);
    const int64_t before = ag::detail::parallel_loops_split();
    const Tensor got = chain(x, y);
    EXPECT_GT(ag::detail::parallel_loops_split(), before) << threads << " threads";
    EXPECT_EQ(got.to_vector<float>(), serial.to_vector<float>()) << threads << " threads";
  }
}

TEST(ParallelKernels, ScalarOperandsCastsAndComparisonsSplitToo) {
  const int64_t n = 300000;
  const Tensor x = ag::random_uniform({n}, ag::float32, -3, 3, 3);
  Threads one(1);
  const Tensor a = ag::cast(x * 100.f, ag::int32) % 7, b = x > 0.5f, c = ag::where(x > 0.f, x, ag::constant(-1.f));
  ag::set_num_threads(2);
  const int64_t before = ag::detail::parallel_loops_split();
  EXPECT_EQ((ag::cast(x * 100.f, ag::int32) % 7).to_vector<int32_t>(), a.to_vector<int32_t>());
  EXPECT_EQ((x > 0.5f).to_vector<bool>(), b.to_vector<bool>());
  EXPECT_EQ(ag::where(x > 0.f, x, ag::constant(-1.f)).to_vector<float>(), c.to_vector<float>());
  EXPECT_GE(ag::detail::parallel_loops_split(), before + 6);  // every op above split
}

TEST(ParallelKernels, AnErrorInAChunkReachesTheCaller) {
  Threads two(2);
  std::vector<int32_t> d(300000, 3);
  d[250000] = 0;  // in the second chunk
  const Tensor num = ag::ones({300000}, ag::int32), den = ag::constant(d);
  AG_EXPECT_ERROR(ag::InvalidArgumentError, num / den, "division by zero");
}

TEST(ParallelKernels, SetNumThreadsChecksItsArgument) {
  AG_EXPECT_ERROR(ag::ValueError, ag::set_num_threads(0), "set_num_threads(0)");
  AG_EXPECT_ERROR(ag::ValueError, ag::set_num_threads(5000), "1 to 1024");
  Threads three(3);
  EXPECT_EQ(ag::get_num_threads(), 3);
}

}  // namespace
