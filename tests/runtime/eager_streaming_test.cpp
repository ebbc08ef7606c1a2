// Streaming stores in eager kernels (src/ops/isa/elementwise.cpp): a large elementwise result
// past the bar (AG_NONTEMPORAL) is computed in pieces into a scratch buffer and copied out
// around the cache. Checked: that the streaming path ran (its counter), that it gives the bits
// of cached stores on 1 to 3 threads for every class of elementwise op and dtype, that results
// under the bar and with the setting 0 do not stream, that an error raised in a piece reaches
// the caller, and that a bad setting is an error naming it. The bar is set low here, so
// 1 MB tensors exercise what a default machine does past 3/4 of its last-level cache. ctest runs
// these under x86-64-v2 and -v3 kernels too (16- and 32-byte streaming stores).
#include <cstring>
#include <string>
#include <vector>

#include "../common/scoped_env.h"
#include "ag/detail/parallel.h"
#include "ag/detail/streaming_stores.h"
#include "test_util.h"

namespace {

using ag::Tensor;
using Threads = ag::detail::ScopedNumThreads;

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.impl()->data, b.impl()->data, static_cast<size_t>(a.num_elements()) * ag::dtype_size(a.dtype())) == 0;
}

// Every class of flat elementwise op: unary float (Eigen's and agc's fixed-up transcendentals),
// binary with a scalar operand, comparison (bool results: 1-byte elements), select, casts
// (int32, float64: other element sizes than the operands').
std::vector<Tensor> ops(const Tensor& x, const Tensor& y) {
  return {ag::tanh(x) * 2.5f - ag::exp(-ag::abs(y)),
          ag::maximum(x, y) / (ag::abs(y) + 1.f),
          x > 0.5f,
          ag::where(x > y, x, ag::constant(-1.f)),
          ag::cast(x * 100.f, ag::int32) % 7,
          ag::cast(y, ag::float64) * 3.0};
}
constexpr int64_t kOps = 18;  // elementwise ops in ops() (abs, neg, casts and scalars count): each streams

// The results with cached stores on one thread, then with streaming stores from 4 KB on 1, 2
// and 3 threads: the same bits, and every op streamed.
void expect_streams_with_the_cached_bits(const ag::Shape& shape) {
  const Tensor x = ag::random_uniform(shape, ag::float32, -3, 3, 1), y = ag::random_uniform(shape, ag::float32, -3, 3, 2);
  std::vector<Tensor> cached;
  {
    const agtest::ScopedEnv off("AG_NONTEMPORAL", "0");
    const Threads one(1);
    const int64_t before = ag::detail::streamed_eager_ops();
    cached = ops(x, y);
    EXPECT_EQ(ag::detail::streamed_eager_ops(), before) << "AG_NONTEMPORAL=0 streamed";
  }
  const agtest::ScopedEnv low("AG_NONTEMPORAL", "4096");
  for (int threads : {1, 2, 3}) {
    const Threads t(threads);
    const int64_t before = ag::detail::streamed_eager_ops();
    const std::vector<Tensor> got = ops(x, y);
    EXPECT_EQ(ag::detail::streamed_eager_ops(), before + kOps) << shape.str() << ", " << threads << " threads";
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_TRUE(same_bits(got[k], cached[k])) << "op " << k << ", " << shape.str() << ", " << threads << " threads";
  }
}

TEST(EagerStreaming, LargeResultsStreamWithTheCachedBitsOnEveryThreadCount) {
  expect_streams_with_the_cached_bits(ag::Shape{(1 << 18) + 37});  // a partial 64-byte block, pieces and chunks
  expect_streams_with_the_cached_bits(ag::Shape{513, 515});         // rank 2, rows not a multiple of a block
  expect_streams_with_the_cached_bits(ag::Shape{1 << 18});          // whole pieces only
}

// `auto`: a 1 MB result is under any last-level cache's 3/4; broadcasting along a dim never
// takes the flat path.
TEST(EagerStreaming, SmallAndBroadcastResultsDoNotStream) {
  const Tensor x = ag::random_uniform({1 << 18}, ag::float32, -3, 3, 3);
  {
    const agtest::ScopedEnv bar("AG_NONTEMPORAL", "auto");
    ASSERT_GE(ag::detail::last_level_cache_bytes() / 4 * 3, int64_t{1} << 20);
    const int64_t before = ag::detail::streamed_eager_ops();
    const Tensor y = x * 2.f + 1.f;
    EXPECT_EQ(ag::detail::streamed_eager_ops(), before);
  }
  const agtest::ScopedEnv low("AG_NONTEMPORAL", "4096");
  const Tensor m = ag::random_uniform({512, 512}, ag::float32, -3, 3, 4), row = ag::random_uniform({512}, ag::float32, -3, 3, 5);
  const int64_t before = ag::detail::streamed_eager_ops();
  const Tensor y = m + row;
  EXPECT_EQ(ag::detail::streamed_eager_ops(), before);
  EXPECT_EQ(y.to_vector<float>()[513], m.to_vector<float>()[513] + row.to_vector<float>()[1]);
}

TEST(EagerStreaming, AnErrorInAPieceReachesTheCaller) {
  const agtest::ScopedEnv low("AG_NONTEMPORAL", "4096");
  std::vector<int32_t> v(300000, 7);
  v[250001] = 0;
  const Tensor a = ag::constant(std::vector<int32_t>(300000, 21)), b = ag::constant(v);
  for (int threads : {1, 3}) {
    const Threads t(threads);
    EXPECT_THROW(a / b, ag::InvalidArgumentError) << threads << " threads";
  }
}

// A ValueError eagerly; in a graph the interpreter reports it as the run's InvalidArgumentError
// (runtime.ops_via_graph), with the same text.
TEST(EagerStreaming, ABadSettingIsAnErrorNamingIt) {
  const Tensor x = ag::random_uniform({1 << 18}, ag::float32, -3, 3, 6);
  const agtest::ScopedEnv bad("AG_NONTEMPORAL", "-5");
  try {
    const Tensor y = x + 1.f;
    ADD_FAILURE() << "no error";
  } catch (const ag::Error& e) {
    EXPECT_TRUE(dynamic_cast<const ag::ValueError*>(&e) || dynamic_cast<const ag::InvalidArgumentError*>(&e)) << e.what();
    EXPECT_NE(std::string(e.what()).find("AG_NONTEMPORAL='-5'"), std::string::npos) << e.what();
  }
}

}  // namespace
