// ag::set_flush_denormals: with it on, a result that would be denormal is 0 and a denormal input
// reads as 0, eagerly, in the interpreter and in compiled code, on the calling thread and on the
// pool's threads (a loop split over two); off again, IEEE arithmetic comes back.
#include <cmath>
#include <limits>

#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "loop_splits_mode.h"

namespace {

using ag::Tensor;

// The mode set for a test, and off again after it (the mode is the thread's).
struct FlushDenormals {
  explicit FlushDenormals(bool on) { ag::set_flush_denormals(on); }
  ~FlushDenormals() { ag::set_flush_denormals(false); }
};

constexpr float kTiny = 1e-30f;  // times kTiny: 1e-60, far below the smallest normal float

int64_t denormals(const Tensor& t) {
  int64_t n = 0;
  for (float v : t.to_vector<float>()) n += std::fpclassify(v) == FP_SUBNORMAL;
  return n;
}
int64_t zeros(const Tensor& t) {
  int64_t n = 0;
  for (float v : t.to_vector<float>()) n += v == 0.0f;
  return n;
}

TEST(FlushDenormals, ResultsAndInputsFlushEverywhereAndOnThePool) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  ASSERT_FALSE(ag::flush_denormals());
  const ag::detail::ScopedNumThreads two(2);
  constexpr int64_t kN = int64_t{1} << 20;  // a pool-sized loop, eager and compiled
  // x * kTiny with x in [1e-9, 2e-9]: denormal products (about 1e-39).
  const Tensor x = ag::random_uniform({kN}, ag::float32, 1e-9f, 2e-9f, 1);
  auto scale = [](Tensor v) { return v * kTiny * 1e21f; };  // denormal, then times 1e21: 1e-18 unless flushed
  auto f = ag::function(scale);
  auto interp = ag::function(scale, {.jit_compile = false});
  // Off: IEEE. The denormal intermediate scales back up to a normal number.
  for (const Tensor& r : {scale(x), f(x), interp(x)}) {
    EXPECT_EQ(zeros(r), 0);
    EXPECT_GT(r.to_vector<float>()[0], 1e-20f);
  }
  const int64_t split_before = ag::detail::parallel_loops_split();
  {
    const FlushDenormals on(true);
    EXPECT_TRUE(ag::flush_denormals());
    // On: the intermediate is flushed, so every element is 0, on both threads' halves.
    for (const Tensor& r : {scale(x), f(x), interp(x)}) EXPECT_EQ(zeros(r), kN);
    // A denormal input reads as 0.
    const Tensor d = ag::fill({kN}, Tensor(std::numeric_limits<float>::denorm_min() * 8));
    auto twice = ag::function([](Tensor v) { return v * 2.0f; });
    EXPECT_EQ(zeros(twice(d)), kN);
    EXPECT_EQ(zeros(d * 2.0f), kN);
  }
  EXPECT_GT(ag::detail::parallel_loops_split(), split_before) << "the loops ran on one thread";
  // Off again, on this thread and the pool's.
  EXPECT_FALSE(ag::flush_denormals());
  EXPECT_EQ(zeros(f(x)), 0);
  EXPECT_EQ(zeros(scale(x)), 0);
  EXPECT_EQ(denormals(x * kTiny), kN);
  EXPECT_EQ(denormals(ag::function([](Tensor v) { return v * kTiny; })(x)), kN);
}

}  // namespace
