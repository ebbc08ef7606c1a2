// Eager kernels on the shared thread pool: large elementwise ops, matmuls, reductions and
// arg-reductions split into chunks give the serial result bit for bit whatever the thread count,
// errors raised in a chunk reach the caller, and set_num_threads checks its argument.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <cstring>

#include "ag/detail/gemm_halves.h"
#include "ag/detail/kernel_set.h"
#include "ag/detail/log.h"
#include "ag/detail/parallel.h"
#include "test_util.h"

namespace {

using ag::Tensor;

using Threads = ag::detail::ScopedNumThreads;
using ag::detail::GemmHalvesChooser;
using ag::detail::GemmHalvesMode;

// Sets how mid-size products choose their halves (ag/detail/gemm_halves.h) for a scope. The
// pool reads AG_GEMM_HALVES when it first starts: start it first, so the scope's mode holds.
class ScopedHalvesMode {
 public:
  explicit ScopedHalvesMode(GemmHalvesMode mode) {
    (void)ag::detail::parallel_threads();
    saved_ = ag::detail::set_gemm_halves_mode(mode);
  }
  ~ScopedHalvesMode() { ag::detail::set_gemm_halves_mode(saved_); }
  ScopedHalvesMode(const ScopedHalvesMode&) = delete;
  ScopedHalvesMode& operator=(const ScopedHalvesMode&) = delete;

 private:
  GemmHalvesMode saved_ = GemmHalvesMode::Measure;
};

using agtest::same_bits;

// `all()` on 2 and 3 threads gives `one` (its 1-thread results) bit for bit, and at least
// `splits` of its ops split over the pool.
template <class F>
void expect_the_same_on_2_and_3_threads(const char* what, F all, const std::vector<Tensor>& one, int64_t splits) {
  for (int threads : {2, 3}) {
    Threads t(threads);
    const int64_t before = ag::detail::parallel_loops_split();
    const std::vector<Tensor> got = all();
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_TRUE(same_bits(got[k], one[k])) << what << " " << k << ", " << threads << " threads";
    EXPECT_GE(ag::detail::parallel_loops_split(), before + splits) << what << "s, " << threads << " threads";
  }
}

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

// Random int32 operands [m, k] and [k, n] (seeds `seed`, `seed` + 1) and their product by a plain
// triple loop: every block boundary of a split product must land right.
struct IntProduct {
  Tensor a, b;
  std::vector<int32_t> want;
  IntProduct(int64_t m, int64_t k, int64_t n, uint64_t seed)
      : a(ag::cast(ag::random_uniform({m, k}, ag::float32, -9, 9, seed), ag::int32)),
        b(ag::cast(ag::random_uniform({k, n}, ag::float32, -9, 9, seed + 1), ag::int32)),
        want(static_cast<size_t>(m * n), 0) {
    const std::vector<int32_t> va = a.to_vector<int32_t>(), vb = b.to_vector<int32_t>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) want[i * n + j] += va[i * k + p] * vb[p * n + j];
  }
};

// Large products: blocks of rows of C on the pool. Integers against a plain triple loop (every
// block boundary right), floats bit for bit across thread counts (the blocks do not depend on it).
TEST(ParallelKernels, LargeMatmulsSplitIntoRowBlocksTheSameForEveryThreadCount) {
  const int64_t m = 301, k = 250, n = 230;  // 17M multiply-adds, rows not a multiple of the block
  const IntProduct ints(m, k, n, 1);
  const Tensor &ai = ints.a, &bi = ints.b;
  const std::vector<int32_t>& want = ints.want;
  const Tensor af = ag::random_uniform({m, k}, ag::float32, -1, 1, 3), bf = ag::random_uniform({k, n}, ag::float32, -1, 1, 4);
  Tensor one;
  {
    Threads t(1);
    one = ag::matmul(af, bf);
    EXPECT_EQ(ag::matmul(ai, bi).to_vector<int32_t>(), want);
  }
  for (int threads : {2, 3}) {
    Threads t(threads);
    const int64_t before = ag::detail::parallel_loops_split();
    EXPECT_EQ(ag::matmul(ai, bi).to_vector<int32_t>(), want) << threads << " threads";
    EXPECT_EQ(ag::matmul(af, bf).to_vector<float>(), one.to_vector<float>()) << threads << " threads";
    EXPECT_GE(ag::detail::parallel_loops_split(), before + 2) << threads << " threads";
  }
}

// Mid-size products (2^20 to 2^24 multiply-adds) on 2 threads or more: two halves, of rows from
// 96 rows, else of columns from 128 (AG_GEMM_HALVES=1: always, not measured); on one thread
// whole. The halves give the whole product bit for bit (the cut keeps Eigen's panels,
// gemm_split.h's kColumnCutMultiple): floats and doubles, either operand transposed, columns and
// rows that are no multiple of a panel, k longer than one of Eigen's k blocks; integers against
// a triple loop.
TEST(ParallelKernels, MidSizeMatmulsSplitInTwoHalvesWithTheWholeProductsBits) {
  const ScopedHalvesMode always(GemmHalvesMode::Always);
  struct Case {
    int64_t m, k, n;
  };
  // 7.2M (rows), 4.8M (columns), 6.7M (columns, k over Eigen's kc), 2.1M (an LSTM's gates,
  // columns), 3.3M (rows, odd counts everywhere).
  for (const Case c : {Case{301, 120, 200}, Case{64, 300, 250}, Case{64, 700, 150}, Case{32, 128, 512}, Case{101, 173, 191}}) {
    const int64_t m = c.m, k = c.k, n = c.n;
    const IntProduct ints(m, k, n, 11);
    for (ag::DType d : {ag::float32, ag::float64}) {
      const Tensor a = ag::cast(ag::random_uniform({m, k}, ag::float32, -1, 1, 13), d),
                   b = ag::cast(ag::random_uniform({k, n}, ag::float32, -1, 1, 14), d),
                   at = ag::cast(ag::random_uniform({k, m}, ag::float32, -1, 1, 15), d),
                   bt = ag::cast(ag::random_uniform({n, k}, ag::float32, -1, 1, 16), d);
      std::vector<Tensor> one;
      {
        Threads t(1);
        const int64_t before = ag::detail::parallel_loops_split();
        one = {ag::matmul(a, b), ag::matmul(at, b, true, false), ag::matmul(a, bt, false, true)};
        EXPECT_EQ(ag::matmul(ints.a, ints.b).to_vector<int32_t>(), ints.want) << m << "x" << k << "x" << n;
        EXPECT_EQ(ag::detail::parallel_loops_split(), before) << "whole on one thread";
      }
      for (int threads : {2, 3}) {
        Threads t(threads);
        const std::string at_case = fmt::format("{}x{}x{} {}, {} threads", m, k, n, ag::dtype_name(d), threads);
        const int64_t before = ag::detail::parallel_loops_split();
        EXPECT_EQ(ag::matmul(ints.a, ints.b).to_vector<int32_t>(), ints.want) << at_case;
        EXPECT_TRUE(same_bits(ag::matmul(a, b), one[0])) << at_case;
        EXPECT_TRUE(same_bits(ag::matmul(at, b, true, false), one[1])) << at_case << ", a transposed";
        EXPECT_TRUE(same_bits(ag::matmul(a, bt, false, true), one[2])) << at_case << ", b transposed";
        EXPECT_EQ(ag::detail::parallel_loops_split(), before + 4) << at_case << ": each product in halves";
      }
    }
  }
  // Under 2^20 multiply-adds: whole (a split's hand-over costs more than half of it saves).
  Threads two(2);
  const Tensor a = ag::random_uniform({32, 64}, ag::float32, -1, 1, 16), b = ag::random_uniform({64, 256}, ag::float32, -1, 1, 17);
  const int64_t before = ag::detail::parallel_loops_split();
  (void)ag::matmul(a, b);
  EXPECT_EQ(ag::detail::parallel_loops_split(), before);
}

// The halves' trial (ag/detail/gemm_halves.h) on synthetic times: the first calls of a shape
// alternate halves and whole, kTrialsPerSide of each; the halves are taken only when their best
// time is under kRequiredGain of the whole product's; the decision holds for kRetrialCalls calls,
// then the trial runs again (the machine may have changed); keys that differ only in their
// transposes are apart.
TEST(ParallelKernels, GemmHalvesChooserTakesTheFasterByTrial) {
  const ag::detail::GemmShapeKey lstm{32, 128, 512, "float32", 0, true}, other{32, 128, 512, "float32", 1, true};
  auto trial = [](GemmHalvesChooser& c, const ag::detail::GemmShapeKey& key, int64_t halves_ns, int64_t whole_ns) {
    int halves = 0, whole = 0;
    for (int i = 0; i < 2 * GemmHalvesChooser::kTrialsPerSide; ++i) {
      const GemmHalvesChooser::Choice choice = c.choose(key);
      EXPECT_TRUE(choice.timed) << "call " << i << " of the trial";
      ++(choice.split ? halves : whole);
      c.record(key, choice.split, choice.split ? halves_ns + i : whole_ns + i);
    }
    EXPECT_EQ(halves, GemmHalvesChooser::kTrialsPerSide);
    EXPECT_EQ(whole, GemmHalvesChooser::kTrialsPerSide);
  };
  GemmHalvesChooser c(ag::detail::describe_gemm_shape);
  trial(c, lstm, 6000, 10000);  // halves 0.6x: taken
  EXPECT_EQ(c.decisions().split, 1);
  trial(c, other, 9500, 10000);  // 0.95x: not worth a second core
  EXPECT_EQ(c.decisions().whole, 1);
  for (int64_t i = 1; i < GemmHalvesChooser::kRetrialCalls; ++i) {
    const GemmHalvesChooser::Choice a = c.choose(lstm), b = c.choose(other);
    ASSERT_TRUE(a.split && !b.split && !b.timed) << "call " << i << " after the decisions";
    // The halves taken are watched (every kWatchEvery-th call timed); still fast, they stay.
    ASSERT_EQ(a.timed, i % GemmHalvesChooser::kWatchEvery == 0) << "call " << i;
    if (a.timed) c.record(lstm, true, 6500);
  }
  EXPECT_EQ(c.decisions().fell_behind, 0);
  // The machine changed: the halves now take 1.4x.
  trial(c, lstm, 14000, 10000);
  EXPECT_EQ(c.decisions().whole, 2);
  EXPECT_FALSE(c.choose(lstm).split);
}

// The loops' form of the trial (ag/detail/split_chooser.h, as loop_splits.cpp makes it): the
// split's calls in a row, then the whole's; the split kept unless the whole takes under
// kRequiredGain of its time (k-means' largest loop: 225 us split, 220 us whole: split), the
// whole taken when it does.
TEST(ParallelKernels, ALoopTrialRunsEachWayInARowAndKeepsTheSplitUnlessTheWholeWinsClearly) {
  using Chooser = ag::detail::SplitChooser<int>;
  Chooser c([](const int& key) { return std::to_string(key); },
            {.slots = 4, .order = Chooser::Order::InARow, .prefer = Chooser::Default::Split});
  auto trial = [&](int key, int64_t split_ns, int64_t whole_ns) {
    for (int i = 0; i < 2 * Chooser::kTrialsPerSide; ++i) {
      const Chooser::Choice choice = c.choose(key);
      ASSERT_TRUE(choice.timed) << "call " << i;
      ASSERT_EQ(choice.split, i < Chooser::kTrialsPerSide) << "call " << i << ": the split's calls first, in a row";
      c.record(key, choice.split, choice.split ? split_ns : whole_ns);
    }
  };
  trial(1, 225000, 220000);
  EXPECT_EQ(c.decisions().split, 1);
  EXPECT_TRUE(c.choose(1).split);
  trial(2, 225000, 190000);  // the whole at 0.84x: taken
  EXPECT_EQ(c.decisions().whole, 1);
  const Chooser::Choice after = c.choose(2);
  EXPECT_FALSE(after.split);
  EXPECT_FALSE(after.timed);
}

// Halves taken that fall behind the whole product (a VM's vCPUs moved) are tried again after
// kWatchSamples watched calls, not kRetrialCalls calls later; a trial then takes the whole.
TEST(ParallelKernels, GemmHalvesThatFallBehindAreTriedAgainAtOnce) {
  const ag::detail::GemmShapeKey key{32, 128, 512, "float32", 0, true};
  GemmHalvesChooser c(ag::detail::describe_gemm_shape);
  auto trial = [&](int64_t halves_ns, int64_t whole_ns) {
    for (int i = 0; i < 2 * GemmHalvesChooser::kTrialsPerSide; ++i) {
      const GemmHalvesChooser::Choice choice = c.choose(key);
      ASSERT_TRUE(choice.timed) << "call " << i << " of the trial";
      c.record(key, choice.split, choice.split ? halves_ns : whole_ns);
    }
  };
  trial(6000, 10000);
  ASSERT_EQ(c.decisions().split, 1);
  int64_t calls = 0, watched = 0;
  for (;;) {
    const GemmHalvesChooser::Choice choice = c.choose(key);
    ++calls;
    ASSERT_LT(calls, GemmHalvesChooser::kRetrialCalls) << "never tried again before the periodic retrial";
    if (!choice.split || (choice.timed && watched == GemmHalvesChooser::kWatchSamples)) break;  // a new trial's call
    if (!choice.timed) continue;
    ++watched;
    c.record(key, true, 14000);  // now 1.4x the whole's best
  }
  EXPECT_EQ(watched, GemmHalvesChooser::kWatchSamples);
  EXPECT_EQ(calls, GemmHalvesChooser::kWatchSamples * GemmHalvesChooser::kWatchEvery + 1);
  EXPECT_EQ(c.decisions().fell_behind, 1);
  // The new trial (the call above was its first, halves): record it, then the rest.
  c.record(key, true, 14000);
  for (int i = 1; i < 2 * GemmHalvesChooser::kTrialsPerSide; ++i) {
    const GemmHalvesChooser::Choice choice = c.choose(key);
    ASSERT_TRUE(choice.timed) << "call " << i << " of the new trial";
    c.record(key, choice.split, choice.split ? 14000 : 10000);
  }
  EXPECT_EQ(c.decisions().whole, 1);
  const GemmHalvesChooser::Choice after = c.choose(key);
  EXPECT_FALSE(after.split);
  EXPECT_FALSE(after.timed);  // the whole product is not watched
}

// AG_GEMM_HALVES=measure (the default) on two threads: a mid-size product's first calls try
// both ways (the halves ran: loops split), a decision is taken and logged (AG_LOG=kernels), and
// every call, trial or not, gives the whole product's bits.
TEST(ParallelKernels, MeasuredHalvesKeepTheWholeProductsBits) {
  const ScopedHalvesMode measure(GemmHalvesMode::Measure);
  const agtest::LogCapture log(static_cast<unsigned>(ag::detail::LogTopic::Kernels));
  const Tensor a = ag::random_uniform({48, 160}, ag::float32, -1, 1, 31), b = ag::random_uniform({160, 272}, ag::float32, -1, 1, 32);
  Tensor one;
  {
    Threads t(1);
    one = ag::matmul(a, b);
  }
  Threads two(2);
  GemmHalvesChooser& chooser = ag::detail::gemm_halves_chooser();
  auto decided_so_far = [&] { return chooser.decisions().split + chooser.decisions().whole; };
  const int64_t decided = decided_so_far(), before = ag::detail::parallel_loops_split();
  for (int i = 0; i < 2 * GemmHalvesChooser::kTrialsPerSide + 8; ++i) ASSERT_TRUE(same_bits(ag::matmul(a, b), one)) << "call " << i;
  EXPECT_EQ(decided_so_far(), decided + 1) << "one decision for the shape";
  EXPECT_GE(ag::detail::parallel_loops_split(), before + GemmHalvesChooser::kTrialsPerSide) << "the halves' trials ran split";
  EXPECT_EQ(log.count_containing("agc: MatMul 48x160x272 float32, 2 threads: split "), 1u) << "the decision, logged once";
  EXPECT_EQ(log.count_containing("(best of 6 each) -> "), 1u);
}

// The GEMM with a packed B (KernelSet::gemm_pack_b_*: compiled code packs a weight that stays the
// same through a staged loop) gives gemm's bits: on 1, 2 and 3 threads (whole, and the halves of
// rows or columns), either operand transposed, k over Eigen's kc, odd sizes. Products that gemm
// does not run as one blocked product pack nothing (matrix-vector, small, row blocks); a buffer
// packed for other shapes is not read.
template <class T>
void expect_packed_products_with_gemms_bits(ag::DType d) {
  const ScopedHalvesMode always(GemmHalvesMode::Always);
  const ag::detail::KernelSet& ks = ag::detail::kernels();
  const auto bytes = d == ag::float32 ? ks.gemm_packed_b_bytes_f32 : ks.gemm_packed_b_bytes_f64;
  auto pack = [&](const T* b, void* p, int64_t m, int64_t k, int64_t n, int64_t t) {
    if constexpr (std::is_same_v<T, float>) ks.gemm_pack_b_f32(b, p, m, k, n, t);
    else ks.gemm_pack_b_f64(b, p, m, k, n, t);
  };
  auto packed_gemm = [&](const T* a, const T* b, const void* p, T* c, int64_t m, int64_t k, int64_t n, int64_t t) {
    if constexpr (std::is_same_v<T, float>) ks.gemm_packed_b_f32(a, b, p, c, m, k, n, t);
    else ks.gemm_packed_b_f64(a, b, p, c, m, k, n, t);
  };
  auto gemm = [&](const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, int64_t t) {
    if constexpr (std::is_same_v<T, float>) ks.gemm_f32(a, b, c, m, k, n, t);
    else ks.gemm_f64(a, b, c, m, k, n, t);
  };
  struct Case {
    int64_t m, k, n;
  };
  // An LSTM's two gate products, halves of rows and of columns, k over kc, odd sizes, small.
  for (const Case c : {Case{32, 64, 512}, Case{32, 128, 512}, Case{301, 120, 200}, Case{64, 700, 150}, Case{101, 173, 191},
                       Case{7, 9, 13}, Case{40, 50, 60}}) {
    const int64_t m = c.m, k = c.k, n = c.n;
    const std::vector<T> a = ag::cast(ag::random_uniform({m * k}, ag::float32, -1, 1, 21), d).to_vector<T>();
    const std::vector<T> b = ag::cast(ag::random_uniform({k * n}, ag::float32, -1, 1, 22), d).to_vector<T>();
    const int64_t size = bytes(m, k, n);
    ASSERT_GT(size, 0) << m << "x" << k << "x" << n;
    std::vector<char> buffer(static_cast<size_t>(size));
    for (int64_t t = 0; t < 4; ++t) {
      pack(b.data(), buffer.data(), m, k, n, t);
      std::vector<T> want(static_cast<size_t>(m * n)), got(want.size(), T(7));
      for (int threads : {1, 2, 3}) {
        Threads th(threads);
        gemm(a.data(), b.data(), want.data(), m, k, n, t);
        const int64_t before = ag::detail::parallel_loops_split(), products = ag::detail::gemm_packed_b_products();
        packed_gemm(a.data(), b.data(), buffer.data(), got.data(), m, k, n, t);
        const bool halves = threads > 1 && m * k * n >= (int64_t{1} << 20);
        EXPECT_EQ(ag::detail::parallel_loops_split(), before + (halves ? 1 : 0)) << m << "x" << k << "x" << n;
        EXPECT_EQ(ag::detail::gemm_packed_b_products(), products + 1) << "read the packed panels";
        EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(T)), 0)
            << ag::dtype_name(d) << " " << m << "x" << k << "x" << n << ", transposes " << t << ", " << threads << " threads";
      }
    }
    // Packed for [m, k] x [k, n], asked for [m - 1, k] x [k, n]: B itself is read.
    std::vector<T> want(static_cast<size_t>((m - 1) * n)), got(want.size());
    gemm(a.data(), b.data(), want.data(), m - 1, k, n, 0);
    pack(b.data(), buffer.data(), m, k, n, 0);
    const int64_t products = ag::detail::gemm_packed_b_products();
    packed_gemm(a.data(), b.data(), buffer.data(), got.data(), m - 1, k, n, 0);
    EXPECT_EQ(want, got) << "other shapes";
    EXPECT_EQ(ag::detail::gemm_packed_b_products(), products) << "other shapes: B itself";
  }
  EXPECT_EQ(bytes(1, 64, 64), 0) << "a row vector times a matrix";
  EXPECT_EQ(bytes(64, 64, 1), 0) << "a matrix times a column vector";
  EXPECT_EQ(bytes(5, 5, 5), 0) << "Eigen's coefficient-wise product";
  EXPECT_EQ(bytes(1024, 256, 256), 0) << "row blocks on the pool";
}

TEST(ParallelKernels, PackedOperandProductsHaveTheGemmsBits) {
  expect_packed_products_with_gemms_bits<float>(ag::float32);
  expect_packed_products_with_gemms_bits<double>(ag::float64);
}

// Matrix-vector products split from 2^17 elements of the matrix (a GEMV streams it once): blocks
// of rows of at least 2^16 elements, the same for every thread count; both float dtypes, the
// matrix transposed or not, rows not a multiple of the block; integers against a plain loop.
TEST(ParallelKernels, LargeMatrixVectorProductsSplitTheSameForEveryThreadCount) {
  const int64_t m = 1003, k = 300;
  const Tensor ai = ag::cast(ag::random_uniform({m, k}, ag::float32, -9, 9, 6), ag::int32),
               vi = ag::cast(ag::random_uniform({k, 1}, ag::float32, -9, 9, 7), ag::int32);
  const std::vector<int32_t> va = ai.to_vector<int32_t>(), vv = vi.to_vector<int32_t>();
  std::vector<int32_t> want(static_cast<size_t>(m), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) want[static_cast<size_t>(i)] += va[static_cast<size_t>(i * k + p)] * vv[static_cast<size_t>(p)];
  for (ag::DType d : {ag::float32, ag::float64}) {
    const Tensor a = ag::cast(ag::random_uniform({m, k}, ag::float32, -1, 1, 8), d),
                 at = ag::cast(ag::random_uniform({k, m}, ag::float32, -1, 1, 9), d),
                 v = ag::cast(ag::random_uniform({k, 1}, ag::float32, -1, 1, 10), d);
    Tensor one, one_t;
    {
      Threads t(1);
      one = ag::matmul(a, v);
      one_t = ag::matmul(at, v, /*transpose_a=*/true);
      EXPECT_EQ(ag::matmul(ai, vi).to_vector<int32_t>(), want);
    }
    Threads t(2);
    const int64_t before = ag::detail::parallel_loops_split();
    EXPECT_TRUE(agtest::same_bits(ag::matmul(a, v), one)) << ag::dtype_name(d);
    EXPECT_TRUE(agtest::same_bits(ag::matmul(at, v, true), one_t)) << ag::dtype_name(d);
    EXPECT_EQ(ag::matmul(ai, vi).to_vector<int32_t>(), want);
    EXPECT_GE(ag::detail::parallel_loops_split(), before + 3) << ag::dtype_name(d);
  }
}

// Reductions: many slices split by slice (each as on one thread: the serial result exactly); one
// huge row in fixed chunks whose partials combine in order (the same for every thread count).
TEST(ParallelKernels, ReductionsGiveTheSameResultForEveryThreadCount) {
  const Tensor x = ag::random_uniform({2000, 300}, ag::float32, -1, 1, 5);
  const Tensor flat = ag::reshape(x, {-1});
  const Tensor xi = ag::cast(x * 1000.f, ag::int32);
  auto all = [&] {
    return std::vector<Tensor>{ag::reduce_sum(x, {1}), ag::reduce_max(x, {1}), ag::reduce_mean(x, {0}), ag::reduce_sum(flat),
                               ag::reduce_max(flat), ag::reduce_prod(flat * 0.f + 1.f), ag::reduce_sum(xi),
                               ag::reduce_any(flat > 0.9999f)};
  };
  std::vector<Tensor> one;
  {
    Threads t(1);
    one = all();
  }
  double ref = 0;
  for (float v : flat.to_vector<float>()) ref += v;
  EXPECT_NEAR(one[3].item<float>(), ref, 1e-2);
  int64_t iref = 0;
  for (int32_t v : xi.to_vector<int32_t>()) iref += v;
  EXPECT_EQ(one[6].item<int32_t>(), static_cast<int32_t>(iref));
  expect_the_same_on_2_and_3_threads("reduction", all, one, 6);
}

// Arg-reductions split over their outputs, each found by one scan: the same indices (ties to the
// first occurrence) for every thread count, and a plain loop's.
TEST(ParallelKernels, ArgReductionsGiveTheSameIndicesForEveryThreadCount) {
  const Tensor ties = ag::random_uniform({3000, 100}, ag::int32, 0, 4, 6);
  auto all = [&] { return std::vector<Tensor>{ag::argmax(ties, 1), ag::argmin(ties, 0), ag::argmax(ties, 0)}; };
  std::vector<Tensor> one;
  {
    Threads t(1);
    one = all();
  }
  const std::vector<int32_t> v = ties.to_vector<int32_t>();
  const std::vector<int64_t> rows = one[0].to_vector<int64_t>(), cols = one[1].to_vector<int64_t>();
  for (int64_t r = 0; r < 3000; r += 97) {
    const auto row = v.begin() + r * 100;
    EXPECT_EQ(rows[static_cast<size_t>(r)], std::max_element(row, row + 100) - row) << "row " << r;
  }
  for (int64_t c = 0; c < 100; c += 7) {
    int64_t best = 0;
    for (int64_t r = 1; r < 3000; ++r)
      if (v[static_cast<size_t>(r * 100 + c)] < v[static_cast<size_t>(best * 100 + c)]) best = r;
    EXPECT_EQ(cols[static_cast<size_t>(c)], best) << "column " << c;
  }
  expect_the_same_on_2_and_3_threads("arg-reduction", all, one, 3);
}

TEST(ParallelKernels, AnErrorInAChunkReachesTheCaller) {
  Threads two(2);
  std::vector<int32_t> d(300000, 3);
  d[250000] = 0;  // in the second chunk
  const Tensor num = ag::ones({300000}, ag::int32), den = ag::constant(d);
  AG_EXPECT_ERROR(ag::InvalidArgumentError, num / den, "division by zero");
}

// parallel_for_erased itself: every item once, chunks starting at multiples of `unit`, several
// chunks per thread, and none waiting for a thread held up in its chunk: the others claim what
// is left of its block (a fixed part per thread made the caller wait for a worker its vCPU woke
// late).
TEST(ParallelKernels, ChunksAreClaimedSoASlowThreadLeavesTheRestToTheOthers) {
  for (int threads : {2, 3}) {
    Threads t(threads);
    constexpr int64_t kGrain = 1000, kUnit = 8, kN = 40 * kGrain + 7;
    struct Record {
      std::vector<std::atomic<int>> seen = std::vector<std::atomic<int>>(kN);
      std::atomic<bool> slow_done{false};
      std::mutex mu;
      std::vector<std::pair<int64_t, bool>> chunks;  // begin, whether chunk 0 had finished when it began
    } r;
    const int64_t before = ag::detail::parallel_loops_split();
    ag::detail::parallel_for_erased(
        kN, kGrain,
        [](void* c, int64_t b, int64_t e) {
          auto& rec = *static_cast<Record*>(c);
          const bool after_slow = rec.slow_done.load();
          for (int64_t i = b; i < e; ++i) rec.seen[static_cast<size_t>(i)].fetch_add(1);
          if (b == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            rec.slow_done.store(true);
          }
          const std::lock_guard lock(rec.mu);
          rec.chunks.emplace_back(b, after_slow);
        },
        &r, kUnit);
    EXPECT_EQ(ag::detail::parallel_loops_split(), before + 1);
    for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(r.seen[static_cast<size_t>(i)].load(), 1) << "item " << i;
    EXPECT_GT(r.chunks.size(), static_cast<size_t>(threads));  // several chunks per thread
    for (const auto& [b, after_slow] : r.chunks) {
      EXPECT_EQ(b % kUnit, 0) << b;
      EXPECT_FALSE(after_slow) << "the chunk at " << b << " waited for the thread held up in chunk 0";
    }
  }
}

// Loops one after another find the workers still lingering from the last one (thread_pool.cpp,
// kLinger): the parts handed to them through their slots are counted, every item is still
// computed once, and an error thrown in a worker's part reaches the caller. Run again by ctest
// with AG_POOL_LINGER_US=0 (tests/runtime/CMakeLists.txt): then no loop finds one.
TEST(ParallelKernels, BackToBackLoopsAreHandedToLingeringWorkers) {
  const char* env = std::getenv("AG_POOL_LINGER_US");
  const bool off = env && std::string(env) == "0";
  for (int threads : {2, 3}) {
    Threads t(threads);
    constexpr int64_t kN = 4096;
    struct Record {
      std::vector<std::atomic<int>> seen = std::vector<std::atomic<int>>(kN);
      int64_t throw_at = -1;
    } r;
    auto count_items = [](void* c, int64_t b, int64_t e) {
      auto& rec = *static_cast<Record*>(c);
      for (int64_t i = b; i < e; ++i) {
        if (i == rec.throw_at) throw ag::InvalidArgumentError("item " + std::to_string(i));
        rec.seen[static_cast<size_t>(i)].fetch_add(1);
      }
    };
    // Until a loop finds a worker lingering (the first ones wake the workers; under a loaded
    // ctest -j2 a worker may wait for a CPU a while), for at most 5 s; 2000 loops when off.
    const int64_t lingered = ag::detail::parallel_loops_lingered();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int loops = 0;
    while (off ? loops < 2000 : ag::detail::parallel_loops_lingered() == lingered && std::chrono::steady_clock::now() < give_up) {
      for (int k = 0; k < 20; ++k, ++loops) ag::detail::parallel_for_erased(kN, 256, count_items, &r, 1);
    }
    if (off) EXPECT_EQ(ag::detail::parallel_loops_lingered(), lingered) << threads << " threads: a worker lingered";
    else EXPECT_GT(ag::detail::parallel_loops_lingered(), lingered) << threads << " threads: no loop found a worker lingering";
    for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(r.seen[static_cast<size_t>(i)].load(), loops) << "item " << i;
    r.throw_at = kN - 1;  // in the last worker's block
    AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::detail::parallel_for_erased(kN, 256, count_items, &r, 1), "item 4095");
  }
}

TEST(ParallelKernels, SetNumThreadsChecksItsArgument) {
  AG_EXPECT_ERROR(ag::ValueError, ag::set_num_threads(0), "set_num_threads(0)");
  AG_EXPECT_ERROR(ag::ValueError, ag::set_num_threads(5000), "1 to 1024");
  Threads three(3);
  EXPECT_EQ(ag::get_num_threads(), 3);
}

}  // namespace
