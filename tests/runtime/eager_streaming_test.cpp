// Large eager elementwise ops (src/ops/isa/elementwise_parallel.cpp): split over the pool when
// each operand is the whole shape, one element, a row (the result's last dims) or a column (its
// first dims, then 1s), or else along the result's first dims (an outer layout: a broadcast
// middle dim, operands cutting the result at different dims), and past the streaming bar
// (AG_NONTEMPORAL) computed in pieces into a scratch buffer copied out around the cache.
// Checked: that the split and streaming paths ran (their counters), that they give the serial
// bits on 1 to 3 threads for every class of elementwise op and dtype, flat and with row, column
// and outer operands, that small results, outer slices larger than a piece and the setting 0
// do not stream, that an error raised in a piece reaches the caller, and that a bad setting is
// an error naming it. The bar is set low here, so 1 MB
// tensors exercise what a default machine does past 3/4 of its last-level cache. ctest runs
// these under x86-64-v2 and -v3 kernels too (16- and 32-byte streaming stores).
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "../common/scoped_env.h"
#include "ag/detail/parallel.h"
#include "ag/detail/streaming_stores.h"
#include "test_util.h"

namespace {

using ag::Tensor;
using Threads = ag::detail::ScopedNumThreads;

using agtest::same_bits;

// Every class of flat elementwise op: unary float (Eigen's and agc's fixed-up transcendentals),
// binary with a scalar operand, comparison (bool results: 1-byte elements), select, casts
// (int32, float64: other element sizes than the operands').
std::vector<Tensor> flat_ops(const Tensor& x, const Tensor& y) {
  return {ag::tanh(x) * 2.5f - ag::exp(-ag::abs(y)),
          ag::maximum(x, y) / (ag::abs(y) + 1.f),
          x > 0.5f,
          ag::where(x > y, x, ag::constant(-1.f)),
          ag::cast(x * 100.f, ag::int32) % 7,
          ag::cast(y, ag::float64) * 3.0};
}
constexpr int64_t kFlatOps = 18;  // elementwise ops in flat_ops() (abs, neg, casts and scalars count)

// Ops with a row operand (`b`: the result's last dims): binary, comparison, a select with two
// row operands, one with a leading 1 ([1, N]), a cast.
std::vector<Tensor> row_ops(const Tensor& x, const Tensor& b) {
  ag::Shape leading_one = b.shape();
  leading_one.insert(0, 1);
  return {x + b, ag::where(x > b, b, ag::exp(x)), ag::maximum(ag::reshape(b, leading_one), x) * 0.5f,
          ag::cast(x < b, ag::int32) * 3};
}
constexpr int64_t kRowOps = 9;

// Ops with a column operand (`c`: the result's first dims, then 1s: a per-row scale, a
// softmax's row maxima and sums), with a row one (an outer sum: no whole operand), and a select.
std::vector<Tensor> column_ops(const Tensor& x, const Tensor& c) {
  std::vector<int64_t> leading(static_cast<size_t>(x.rank() - 1));
  for (size_t a = 0; a < leading.size(); ++a) leading[a] = static_cast<int64_t>(a);
  const Tensor row = ag::reduce_mean(x, leading);  // the last dim, which the column's 1s cover (not an elementwise op)
  return {x * c, ag::exp(x - c) / (c + 4.f), c + row, ag::where(x > c, c, x)};
}
constexpr int64_t kColumnOps = 7;  // c + 4.f is [M, 1]: too small to split

// Ops that broadcast a middle dim (`m`: [M, 1, W] against `x`: [M, H, W]) or whose operands cut
// the result at different dims ([M, 1, 1] and [M, H, 1]): outer layouts, cut along dim 0.
std::vector<Tensor> outer_ops(const Tensor& x, const Tensor& m) {
  const Tensor per_item = ag::reduce_max(x, {1, 2}, true), per_row = ag::reduce_mean(x, {2}, true);
  return {x * m, ag::exp(x - m) / (ag::abs(m) + 4.f), ag::where(x > m, per_item, per_row),
          ag::cast(x < m, ag::int32) * 3};
}
constexpr int64_t kOuterOps = 11;  // abs(m) + 4.f, [M, 1, W], split too (from 64K elements)

// `ops(x, y)` with cached stores on one thread (the reference), then with cached stores split
// over 2 and 3 threads and with streaming stores from 4 KB on 1, 2 and 3 threads: the same bits,
// every op streamed where it should, and split where there were threads.
template <class Ops>
void expect_the_serial_bits(const char* what, Ops ops, int64_t count, const Tensor& x, const Tensor& y) {
  std::vector<Tensor> serial;
  {
    const agtest::ScopedEnv off("AG_NONTEMPORAL", "0");
    const Threads one(1);
    const int64_t before = ag::detail::streamed_eager_ops();
    serial = ops(x, y);
    EXPECT_EQ(ag::detail::streamed_eager_ops(), before) << "AG_NONTEMPORAL=0 streamed";
  }
  for (const char* bar : {"0", "4096"}) {
    const agtest::ScopedEnv env("AG_NONTEMPORAL", bar);
    for (int threads : {1, 2, 3}) {
      const Threads t(threads);
      const int64_t streamed = ag::detail::streamed_eager_ops(), split = ag::detail::parallel_loops_split();
      const std::vector<Tensor> got = ops(x, y);
      const std::string at = fmt::format("{} {}, AG_NONTEMPORAL={}, {} threads", what, x.shape().str(), bar, threads);
      EXPECT_EQ(ag::detail::streamed_eager_ops(), streamed + (bar[0] == '0' ? 0 : count)) << at;
      if (threads > 1) EXPECT_GE(ag::detail::parallel_loops_split(), split + count) << at;
      for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(same_bits(got[k], serial[k])) << "op " << k << ", " << at;
    }
  }
}

void expect_flat_ops_stream(const ag::Shape& shape) {
  expect_the_serial_bits("flat", flat_ops, kFlatOps, ag::random_uniform(shape, ag::float32, -3, 3, 1),
                         ag::random_uniform(shape, ag::float32, -3, 3, 2));
}

void expect_column_ops_stream(const ag::Shape& shape, const ag::Shape& column) {
  expect_the_serial_bits("columns", column_ops, kColumnOps, ag::random_uniform(shape, ag::float32, -3, 3, 5),
                         ag::random_uniform(column, ag::float32, -3, 3, 6));
}

void expect_row_ops_stream(const ag::Shape& shape, const ag::Shape& row) {
  expect_the_serial_bits("rows", row_ops, kRowOps, ag::random_uniform(shape, ag::float32, -3, 3, 3),
                         ag::random_uniform(row, ag::float32, -3, 3, 4));
}

// Outer layouts: slices of 400 elements along dim 0, streamed in runs of whole slices.
TEST(EagerStreaming, OuterBroadcastsSplitAndStreamWithTheSerialBits) {
  expect_the_serial_bits("outer", outer_ops, kOuterOps, ag::random_uniform({1024, 4, 100}, ag::float32, -3, 3, 7),
                         ag::random_uniform({1024, 1, 100}, ag::float32, -3, 3, 8));
  expect_the_serial_bits("outer, rank 4", outer_ops, kOuterOps,
                         ag::reshape(ag::random_uniform({64, 16, 4, 100}, ag::float32, -3, 3, 9), {1024, 4, 100}),
                         ag::random_uniform({1024, 1, 100}, ag::float32, -3, 3, 10));
}

// Slices larger than a streamed piece (90,000 elements here) split but keep cached stores; a
// Fixed operand ([1, H, 1]: 1s along the cut dims) is the same slice for every chunk.
TEST(EagerStreaming, LargeOuterSlicesSplitWithoutStreaming) {
  const Tensor x = ag::random_uniform({4, 300, 300}, ag::float32, -3, 3, 11),
               m = ag::random_uniform({4, 1, 300}, ag::float32, -3, 3, 12),
               f = ag::random_uniform({1, 300, 1}, ag::float32, -3, 3, 13);
  auto ops = [&] { return std::vector<Tensor>{x * m, ag::where(x > 0.f, m, f)}; };
  std::vector<Tensor> serial;
  {
    const Threads one(1);
    serial = ops();
  }
  const agtest::ScopedEnv low("AG_NONTEMPORAL", "4096");
  for (int threads : {1, 2, 3}) {
    const Threads t(threads);
    const int64_t streamed = ag::detail::streamed_eager_ops(), split = ag::detail::parallel_loops_split();
    const std::vector<Tensor> got = ops();
    EXPECT_EQ(ag::detail::streamed_eager_ops(), streamed + 1) << threads << " threads";  // x > 0.f is flat
    if (threads > 1) EXPECT_EQ(ag::detail::parallel_loops_split(), split + 3) << threads << " threads";
    for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(same_bits(got[k], serial[k])) << "op " << k << ", " << threads << " threads";
  }
}

TEST(EagerStreaming, LargeResultsStreamWithTheSerialBitsOnEveryThreadCount) {
  expect_flat_ops_stream(ag::Shape{(1 << 18) + 37});  // a partial 64-byte block, pieces and chunks
  expect_flat_ops_stream(ag::Shape{513, 515});         // rank 2, rows not a multiple of a block
  expect_flat_ops_stream(ag::Shape{1 << 18});          // whole pieces only
}

// A row operand (a bias, a per-channel scale) splits the op into chunks of whole rows; streamed
// pieces are runs of short rows or segments of long ones, whose 64-byte blocks need not start
// on a row.
TEST(EagerStreaming, RowBroadcastsSplitAndStreamWithTheSerialBits) {
  expect_row_ops_stream(ag::Shape{513, 515}, ag::Shape{515});              // runs of 1 row of 2060 bytes
  expect_row_ops_stream(ag::Shape{2100, 125}, ag::Shape{125});             // runs of 8 rows of 500 bytes
  expect_row_ops_stream(ag::Shape{64, 4100}, ag::Shape{4100});             // 16400-byte rows in segments
  expect_row_ops_stream(ag::Shape{3, 128, 700}, ag::Shape{128, 700});      // a row of two dims
}

// A column operand ([M, 1] against [M, N], [B, H, 1] against [B, H, W]) splits the op into
// chunks of whole rows too, read once per row of a piece (or as a scalar for a row's segment).
TEST(EagerStreaming, ColumnBroadcastsSplitAndStreamWithTheSerialBits) {
  expect_column_ops_stream(ag::Shape{513, 515}, ag::Shape{513, 1});
  expect_column_ops_stream(ag::Shape{2100, 125}, ag::Shape{2100, 1});
  expect_column_ops_stream(ag::Shape{64, 4100}, ag::Shape{64, 1});
  expect_column_ops_stream(ag::Shape{3, 128, 700}, ag::Shape{3, 128, 1});
}

// `auto`: a 1 MB result is under any last-level cache's 3/4. Operands that cut the result at
// different dims ([M, 1, 1] and [M, H, 1] against [M, H, W]) in slices of 5,120 elements split
// along dim 0 but do not stream.
TEST(EagerStreaming, SmallResultsAndLargeOuterSlicesDoNotStream) {
  const Tensor x = ag::random_uniform({1 << 18}, ag::float32, -3, 3, 3);
  {
    const agtest::ScopedEnv bar("AG_NONTEMPORAL", "auto");
    ASSERT_GE(ag::detail::last_level_cache_bytes() / 4 * 3, int64_t{1} << 20);
    const int64_t before = ag::detail::streamed_eager_ops();
    const Tensor y = x * 2.f + 1.f;
    EXPECT_EQ(ag::detail::streamed_eager_ops(), before);
  }
  const agtest::ScopedEnv low("AG_NONTEMPORAL", "4096");
  const Threads two(2);
  const Tensor m = ag::random_uniform({64, 64, 80}, ag::float32, -3, 3, 4), a = ag::random_uniform({64, 1, 1}, ag::float32, -3, 3, 5),
               b = ag::random_uniform({64, 64, 1}, ag::float32, -3, 3, 6);
  const int64_t streamed = ag::detail::streamed_eager_ops(), split = ag::detail::parallel_loops_split();
  const Tensor y = ag::where(m > 0.f, a, b);
  EXPECT_EQ(ag::detail::streamed_eager_ops(), streamed + 1);  // m > 0.f is flat
  EXPECT_EQ(ag::detail::parallel_loops_split(), split + 2);
  const int64_t i = 64 * 80 + 3 * 80 + 7;  // [1, 3, 7]
  EXPECT_EQ(y.to_vector<float>()[i], m.to_vector<float>()[i] > 0.f ? a.to_vector<float>()[1] : b.to_vector<float>()[64 + 3]);
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
