// Compiled elementwise loops on the shared thread pool (jit/src/lower/parallel_loops.cpp): large
// fused loops are outlined into a worker that agc_rt_parallel_for splits, and give the one-thread
// result bit for bit, which equals the interpreter's within the usual float tolerance; loops that
// can fail, and small ones, stay inline. Full reductions split in fixed chunks.
#include <cstring>
#include <functional>

#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "loop_splits_mode.h"

namespace {

using ag::Tensor;

using Threads = ag::detail::ScopedNumThreads;

Tensor heavy(Tensor x) { return ag::relu(x * 1.5f + 0.25f) * 0.5f - ag::tanh(x); }

TEST(JitParallelLoops, LargeFusedLoopSplitsAndMatchesOneThreadAndTheInterpreter) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const int64_t n = (1 << 18) + 5;
  const Tensor x = ag::random_uniform({n}, ag::float32, -3, 3, 11);
  auto f = ag::function(heavy, {.name = "par_heavy"});
  auto interp = ag::function(heavy, {.jit_compile = false, .name = "par_heavy_interp"});
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(x).llvm_ir(true), "agc_rt_parallel_for"));
  Tensor one;
  {
    Threads t(1);
    const int64_t before = ag::detail::parallel_loops_split();
    one = f(x);
    EXPECT_EQ(ag::detail::parallel_loops_split(), before);
  }
  EXPECT_TRUE(agtest::same_tensor(interp(x), one));
  for (int threads : {2, 3}) {
    Threads t(threads);
    const int64_t before = ag::detail::parallel_loops_split();
    EXPECT_EQ(f(x).to_vector<float>(), one.to_vector<float>()) << threads << " threads";
    EXPECT_GT(ag::detail::parallel_loops_split(), before) << threads << " threads";
  }
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

// Unknown dims: the loop is outlined, and the run-time size decides whether it splits.
// LLVM vectorizes a loop over one flat dim with libmvec's exp/sin and leaves a scalar remainder
// to libm's, which differ in the last bit for some inputs: chunk bounds that moved with the
// thread count changed results (found by the wide random graphs). Chunks now begin at multiples
// of 1024 elements, and every thread count gives the one-thread bits.
TEST(JitParallelLoops, VectorMathLoopsGiveTheOneThreadBitsForEveryThreadCount) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const int64_t n = 1031 * 255;  // not a multiple of any vector step
  const Tensor x = ag::random_uniform({n}, ag::float32, -4, 4, 12);
  const std::vector<std::pair<const char*, std::function<Tensor(Tensor)>>> cases = {
      {"sin", [](Tensor v) { return ag::sin(v); }},
      {"exp", [](Tensor v) { return ag::exp(v); }},
      {"sigmoid", [](Tensor v) { return ag::sigmoid(v); }},
  };
  for (const auto& [what, op] : cases) {
    auto f = ag::function([op = op](Tensor v) { return op(v); });
    const std::string ir = f.get_concrete_function(x).llvm_ir(true);
    EXPECT_NE(ir.find("@_ZGV"), std::string::npos) << what << ": no libmvec vector call, nothing to check";
    Tensor one;
    {
      Threads t(1);
      one = f(x);
    }
    for (int threads : {2, 3, 4}) {
      Threads t(threads);
      const int64_t before = ag::detail::parallel_loops_split();
      const Tensor got = f(x);
      EXPECT_GT(ag::detail::parallel_loops_split(), before) << what << ", " << threads << " threads";
      EXPECT_EQ(std::memcmp(ag::detail::impl_of(got)->data, ag::detail::impl_of(one)->data, static_cast<size_t>(n) * sizeof(float)), 0)
          << what << ": " << threads << " threads differ from one";
    }
  }
}

TEST(JitParallelLoops, DynamicShapesSplitOnlyWhenLarge) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  Threads t(2);
  auto f = ag::function([](Tensor x, Tensor y) { return x * y + ag::exp(-x); },
                        {.input_signature = {ag::TensorSpec({-1, 64}, ag::float32), ag::TensorSpec({-1, 64}, ag::float32)}});
  for (int64_t rows : {1, 7, 5000}) {
    const Tensor x = ag::random_uniform({rows, 64}, ag::float32, -2, 2, 3), y = ag::random_uniform({rows, 64}, ag::float32, -2, 2, 4);
    f(x, y);  // compiled (the compile's second module may take the pool too) before counting
    const int64_t before = ag::detail::parallel_loops_split();
    EXPECT_TRUE(agtest::same_tensor(x * y + ag::exp(-x), f(x, y))) << rows;
    EXPECT_EQ(ag::detail::parallel_loops_split() > before, rows == 5000) << rows;
  }
  EXPECT_EQ(f.stats().traces, 1);
}

// Broadcast operands are walked with zero strides inside each chunk.
TEST(JitParallelLoops, BroadcastRowsSplitAcrossTheOuterDim) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  Threads t(2);
  auto f = ag::function([](Tensor x, Tensor row) { return ag::maximum(x - row, 0.f) * 2; });
  const Tensor x = ag::random_uniform({4096, 96}, ag::float32, -1, 1, 5), row = ag::random_uniform({96}, ag::float32, -1, 1, 6);
  const int64_t before = ag::detail::parallel_loops_split();
  EXPECT_TRUE(agtest::same_tensor(ag::maximum(x - row, 0.f) * 2, f(x, row)));
  EXPECT_GT(ag::detail::parallel_loops_split(), before);
}

// Eager ops whose operands broadcast a middle dim or cut the result at different dims split
// along the result's first dims (an "outer" layout, elementwise_parallel.cpp): eager on 2
// threads, eager on 1 and compiled on 2 give the same values (exact ops: the same bits).
TEST(JitParallelLoops, OuterBroadcastsAgreeEagerAndCompiled) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Tensor x = ag::random_uniform({256, 8, 128}, ag::float32, -1, 1, 7), m = ag::random_uniform({256, 1, 128}, ag::float32, -1, 1, 8),
               a = ag::random_uniform({256, 1, 1}, ag::float32, -1, 1, 9), b = ag::random_uniform({256, 8, 1}, ag::float32, -1, 1, 10);
  auto body = [](Tensor x, Tensor m, Tensor a, Tensor b) { return ag::where(x * m > 0.1f, a, b) + m; };
  auto f = ag::function(body);
  Tensor one;
  {
    Threads t(1);
    one = body(x, m, a, b);
  }
  Threads t(2);
  const int64_t before = ag::detail::parallel_loops_split();
  const Tensor eager = body(x, m, a, b);
  EXPECT_GE(ag::detail::parallel_loops_split(), before + 4);  // x * m, > 0.1f, where, + m
  EXPECT_TRUE(agtest::same_tensor(one, eager));
  EXPECT_TRUE(agtest::same_tensor(one, f(x, m, a, b)));
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

// An integer division can fail (by zero): its loop keeps its error exit and stays serial, and the
// error names the op as before.
TEST(JitParallelLoops, ALoopThatCanFailStaysInlineAndStillRaises) {
  Threads t(2);
  auto f = ag::function([](Tensor a, Tensor b) { return a / b + 1; });
  std::vector<int32_t> d(300000, 3);
  const Tensor a = ag::ones({300000}, ag::int32);
  EXPECT_FALSE(agtest::ir_calls(f.get_concrete_function(a, ag::constant(d)).llvm_ir(true), "agc_rt_parallel_for"));
  EXPECT_TRUE(agtest::same_tensor(a / ag::constant(d) + 1, f(a, ag::constant(d))));
  d[123456] = 0;
  EXPECT_THROW(f(a, ag::constant(d)), ag::InvalidArgumentError);
}

// Large matmuls in compiled code call the eager kernels' GEMM, which splits rows of C into
// blocks on the pool: compiled == eager bit for bit, on any thread count.
TEST(JitParallelLoops, LargeMatmulsShareTheEagerBlockedGemm) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Tensor a = ag::random_uniform({512, 256}, ag::float32, -1, 1, 8), b = ag::random_uniform({256, 160}, ag::float32, -1, 1, 9);
  auto f = ag::function([](Tensor x, Tensor y) { return ag::matmul(x, y) * 2.f; });
  for (int threads : {1, 2}) {
    Threads t(threads);
    const int64_t before = ag::detail::parallel_loops_split();
    EXPECT_EQ(f(a, b).to_vector<float>(), (ag::matmul(a, b) * 2.f).to_vector<float>()) << threads << " threads";
    EXPECT_EQ(ag::detail::parallel_loops_split() > before, threads > 1) << threads << " threads";
  }
}

// A reduction case: its name, the function, its argument.
struct Case {
  const char* what;
  std::function<Tensor(Tensor)> fn;
  Tensor arg;
};

// The compiled reduction is split over the pool (the IR calls agc_rt_parallel_for, and a call on
// 2 or 3 threads splits a loop) and gives the one-thread result bit for bit.
void expect_split_and_the_same_on_any_thread_count(const Case& c) {
  auto f = ag::function(c.fn);
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(c.arg).llvm_ir(true), "agc_rt_parallel_for")) << c.what;
  Tensor one;
  {
    Threads t(1);
    one = f(c.arg);
  }
  for (int threads : {2, 3}) {
    Threads t(threads);
    const int64_t before = ag::detail::parallel_loops_split();
    EXPECT_TRUE(agtest::same_tensor(one, f(c.arg), {.rtol = 0, .atol = 0})) << c.what << ", " << threads << " threads";
    EXPECT_GT(ag::detail::parallel_loops_split(), before) << c.what << ", " << threads << " threads";
  }
}

// A row reduction splits by rows (each row summed in order by one thread); a column reduction in
// a fixed number of blocks of rows, each reduced into its own partial row, the partial rows
// combined in block order. Both give the one-thread result bit for bit on any thread count. A
// small column reduction stays serial.
TEST(JitParallelLoops, RowAndColumnReductionsSplit) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Tensor x = ag::random_uniform({4096, 200}, ag::float32, -1, 1, 10);
  const Tensor x3 = ag::random_uniform({2049, 4, 40}, ag::float32, -1, 1, 15);  // axis 0 of a 3-D tensor: a 2-D walk
  const std::vector<Case> cases = {
      {"reduce_sum(exp(x), axis 1)", [](Tensor v) { return ag::reduce_sum(ag::exp(v), {1}); }, x},
      {"reduce_sum(exp(x), axis 0)", [](Tensor v) { return ag::reduce_sum(ag::exp(v), {0}); }, x},
      {"reduce_max(x * 2, axis 0)", [](Tensor v) { return ag::reduce_max(v * 2.f, {0}); }, x},
      {"reduce_mean(x, axis 0) of 3-D", [](Tensor v) { return ag::reduce_mean(v, {0}); }, x3},
      {"reduce_sum(x, axis 0) int32", [](Tensor v) { return ag::reduce_sum(ag::cast(v * 100.f, ag::int32), {0}); }, x},
      {"reduce_any(x > 0.999, axis 0)", [](Tensor v) { return ag::reduce_any(v > 0.999f, {0}); }, x},
  };
  for (const Case& c : cases) {
    expect_split_and_the_same_on_any_thread_count(c);
    agtest::expect_three_way(c.what, c.fn, {.rtol = 1e-4, .atol = 1e-4}, c.arg);
  }
  auto small = ag::function([](Tensor v) { return ag::reduce_sum(ag::exp(v), {0}); });
  const Tensor few = ag::random_uniform({300, 100}, ag::float32, -1, 1, 16);
  EXPECT_FALSE(agtest::ir_calls(small.get_concrete_function(few).llvm_ir(true), "agc_rt_parallel_for"));
  EXPECT_TRUE(agtest::same_tensor(ag::reduce_sum(ag::exp(few), {0}), small(few), {.rtol = 1e-4, .atol = 1e-3}));
}

// Arg-reductions split over their output elements (each found by one thread, first occurrence
// winning): the same indices on any thread count, and eager's.
TEST(JitParallelLoops, ArgReductionsSplitOverTheirOutputs) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Tensor x = ag::random_uniform({4096, 200}, ag::float32, -1, 1, 17);
  // Few distinct values: many ties, so the first occurrence has to win on every thread count.
  const Tensor ties = ag::random_uniform({3000, 100}, ag::int32, 0, 4, 18);
  const std::vector<Case> cases = {
      {"argmax(exp(x) - x, axis 1)", [](Tensor v) { return ag::argmax(ag::exp(v) - v, 1); }, x},
      {"argmin(x, axis 0)", [](Tensor v) { return ag::argmin(v, 0); }, x},
      {"argmax(ties, axis 1) int32", [](Tensor v) { return ag::argmax(v, 1); }, ties},
      {"argmin(ties, axis 0) int32", [](Tensor v) { return ag::argmin(v, 0); }, ties},
  };
  for (const Case& c : cases) {
    expect_split_and_the_same_on_any_thread_count(c);
    agtest::expect_three_way(c.what, c.fn, {}, c.arg);
  }
}

// A full reduction of a large contiguous operand: fixed chunks of 128K elements, each reduced by
// one thread, combined in chunk order. The result does not depend on the thread count (bit for
// bit), matches eager within the float tolerance, and the split happened.
TEST(JitParallelLoops, FullReductionsSplitInFixedChunks) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const int64_t n = 3 * (int64_t{1} << 17) + 1001;  // four chunks, the last one short
  const Tensor x = ag::random_uniform({n}, ag::float32, -1, 1, 12);
  const Tensor xd = ag::cast(x, ag::float64);
  const Tensor xi = ag::cast(x * 100.f, ag::int32);
  const std::vector<Case> cases = {
      {"reduce_sum(exp(x) * 2)", [](Tensor v) { return ag::reduce_sum(ag::exp(v) * 2.f); }, x},
      {"reduce_mean(x * x) float64", [](Tensor v) { return ag::reduce_mean(v * v); }, xd},
      {"reduce_sum(x) int32", [](Tensor v) { return ag::reduce_sum(v * 3); }, xi},
      {"reduce_max(x - 1)", [](Tensor v) { return ag::reduce_max(v - 1.f); }, x},
      {"reduce_min(x) int32", [](Tensor v) { return ag::reduce_min(v); }, xi},
      {"reduce_prod(1 + x / 1e6) float64", [](Tensor v) { return ag::reduce_prod(v / 1e6 + 1.0); }, xd},
      {"reduce_any(x > 0.999)", [](Tensor v) { return ag::reduce_any(v > 0.999f); }, x},
      {"reduce_all(x > -0.999)", [](Tensor v) { return ag::reduce_all(v > -0.999f); }, x},
      {"reduce_sum of a 2-D operand", [](Tensor v) { return ag::reduce_sum(ag::reshape(v, {-1, 2})); },
       ag::random_uniform({n - 1, 2}, ag::float32, -1, 1, 13)},
  };
  for (const Case& c : cases) {
    expect_split_and_the_same_on_any_thread_count(c);
    agtest::expect_three_way(c.what, c.fn, {.rtol = 1e-5, .atol = 1e-5}, c.arg);
  }
}

// Unknown dims: full and column reductions are compiled both ways, and the run-time size picks
// the split (when it makes two chunks or two row blocks) or the serial walk. Split, the result
// is the same on any thread count; either way it matches eager.
TEST(JitParallelLoops, ReductionsOfUnknownSizeSplitWhenLarge) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  struct Dynamic {
    std::string what;
    std::function<Tensor(Tensor)> fn;
    ag::TensorSpec spec;
    std::vector<int64_t> large, small;
  };
  const std::vector<Dynamic> cases = {
      {"reduce_sum(exp(x)), [-1]", [](Tensor v) { return ag::reduce_sum(ag::exp(v)); }, ag::TensorSpec({-1}, ag::float32),
       {3 * (int64_t{1} << 17) + 7}, {1000}},
      {"reduce_max(x), [-1, -1]", [](Tensor v) { return ag::reduce_max(v); }, ag::TensorSpec({-1, -1}, ag::float32),
       {700, 600}, {3, 5}},
      {"reduce_sum(x, axis 0), [-1, -1]", [](Tensor v) { return ag::reduce_sum(v * 2.f, {0}); },
       ag::TensorSpec({-1, -1}, ag::float32), {4000, 100}, {30, 100}},
      {"reduce_min(x, axis 0) int32, [-1, 64]", [](Tensor v) { return ag::reduce_min(v, {0}); },
       ag::TensorSpec({-1, 64}, ag::int32), {9000, 64}, {7, 64}},
  };
  for (const Dynamic& c : cases) {
    auto f = ag::function(c.fn, {.input_signature = {c.spec}});
    for (const std::vector<int64_t>& dims : {c.large, c.small}) {
      const bool large = dims == c.large;
      const Tensor x = c.spec.dtype() == ag::int32 ? ag::random_uniform(ag::Shape(dims), ag::int32, -1000, 1000, 21)
                                                   : ag::random_uniform(ag::Shape(dims), ag::float32, -1, 1, 21);
      Tensor one;
      {
        Threads t(1);
        one = f(x);
      }
      Threads t(2);
      const int64_t before = ag::detail::parallel_loops_split();
      const Tensor two = f(x);
      EXPECT_EQ(ag::detail::parallel_loops_split() > before, large) << c.what << (large ? ", large" : ", small");
      EXPECT_TRUE(agtest::same_tensor(one, two, {.rtol = 0, .atol = 0})) << c.what;
      EXPECT_TRUE(agtest::same_tensor(c.fn(x), two, {.rtol = 1e-4, .atol = 1e-3})) << c.what;
    }
    EXPECT_EQ(f.stats().traces, 1) << c.what;
  }
}

TEST(JitParallelLoops, SmallLoopsStayInline) {
  auto f = ag::function(heavy, {.name = "par_small"});
  EXPECT_FALSE(agtest::ir_calls(f.get_concrete_function(ag::TensorSpec({1000}, ag::float32)).llvm_ir(true), "agc_rt_parallel_for"));
}

}  // namespace

namespace {

// Pairwise squared distances of N points by broadcasting, as an n-body program computes them
// before its loop and in it.
Tensor pairwise(Tensor p) {
  Tensor d = ag::expand_dims(p, 0) - ag::expand_dims(p, 1);
  return ag::reduce_sum(d * d, {2});
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Identical loop nests are outlined into identical functions, which the optimizer merges
// (MergeFunctions: they are unnamed_addr) so each is optimized and compiled once. Each loop is
// its pool worker (which loads the closure and runs the loop: one function, not a worker
// calling a body) and goes to the second module: there the second becomes a call of the first.
TEST(JitParallelLoops, IdenticalLoopNestsAreMergedAndCompiledOnce) {
  const Tensor p = ag::random_uniform({512, 3}, ag::float32, -1, 1, 21), q = ag::random_uniform({512, 3}, ag::float32, -1, 1, 22);
  auto twice = [](Tensor a, Tensor b) { return std::make_tuple(pairwise(a), pairwise(b)); };
  agtest::expect_three_way("twice", twice, {}, p, q);
  auto f = ag::function(twice);
  const std::string before = f.get_concrete_function(p, q).llvm_ir(false), after = f.get_concrete_function(p, q).llvm_ir(true);
  EXPECT_EQ(count_of(before, "define internal void @agc_parallel_loop."), 2);
  EXPECT_EQ(count_of(before, "define "), 3) << before;  // the entry and the two workers
  // Compiled apart, the two workers are one kernel named by its IR (shared_kernels.h).
  EXPECT_EQ(count_of(after, "define void @agc_parallel_loop."), 1) << after;
  for (int threads : {1, 2}) {
    Threads t(threads);
    agtest::expect_same(twice(p, q), f(p, q), {}, std::to_string(threads) + " threads");
  }
}

// The thresholds (docs/jit.md, "The grain"): a float elementwise loop (agc's vector code) of a
// static size splits from 1.5 grains, 48K elements (in two chunks), a loop of reduced rows (a row
// sum in vector registers) from 256K elements read. Counted on the cached call (a first call's
// compile may split too).
TEST(JitParallelLoops, ElementwiseLoopsSplitFrom48KElementsAndReducedRowsFrom256K) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Threads two(2);
  auto splits_of_cached_call = [](auto& f, const Tensor& x) {
    f(x);
    const int64_t before = ag::detail::parallel_loops_split();
    f(x);
    return ag::detail::parallel_loops_split() - before;
  };
  auto scale = ag::function([](Tensor x) { return x * 2.f + 1.f; });
  auto row_sums = ag::function([](Tensor x) { return ag::reduce_sum(x, {1}); });
  EXPECT_EQ(splits_of_cached_call(scale, ag::random_uniform({1 << 15}, ag::float32, -1, 1, 90)), 0);
  EXPECT_EQ(splits_of_cached_call(scale, ag::random_uniform({48000}, ag::float32, -1, 1, 96)), 0);
  EXPECT_EQ(splits_of_cached_call(scale, ag::random_uniform({49152}, ag::float32, -1, 1, 97)), 1);
  EXPECT_EQ(splits_of_cached_call(scale, ag::random_uniform({1 << 16}, ag::float32, -1, 1, 91)), 1);
  EXPECT_EQ(splits_of_cached_call(row_sums, ag::random_uniform({4096, 16}, ag::float32, -1, 1, 92)), 0);
  EXPECT_EQ(splits_of_cached_call(row_sums, ag::random_uniform({12288, 16}, ag::float32, -1, 1, 98)), 0);
  EXPECT_EQ(splits_of_cached_call(row_sums, ag::random_uniform({16384, 16}, ag::float32, -1, 1, 93)), 1);
  agtest::expect_three_way("x * 2 + 1, 50000 (two chunks)", [](Tensor x) { return x * 2.f + 1.f; }, {},
                           ag::random_uniform({50000}, ag::float32, -1, 1, 99));
  agtest::expect_three_way("x * 2 + 1, 64K", [](Tensor x) { return x * 2.f + 1.f; }, {},
                           ag::random_uniform({1 << 16}, ag::float32, -1, 1, 94));
  agtest::expect_three_way("row sums, [16384, 16]", [](Tensor x) { return ag::reduce_sum(x, {1}); }, {.rtol = 1e-5, .atol = 1e-5},
                           ag::random_uniform({16384, 16}, ag::float32, -1, 1, 95));
}

}  // namespace
