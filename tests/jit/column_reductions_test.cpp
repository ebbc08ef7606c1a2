// Column reductions with short rows (rows reduced, a few vectors of columns kept: a batch norm's
// statistics, a bias gradient) accumulate each block of columns in a vector register over the
// rows, in the rows' order (Emitter::column_reduction_vector), serially and in the pool's blocks
// of rows for large operands. Three-way for every reduction, dtype, width and operand form,
// with the vector form checked in the IR.
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using agtest::sample;
using agtest::Values;

const agtest::Tol kTol{.rtol = 1e-5, .atol = 1e-5};

// The IR has the vector form's loop (its blocks are named "columns").
bool has_column_vectors(auto& f, const auto&... args) {
  return f.get_concrete_function(args...).llvm_ir(false).find("columns:") != std::string::npos;
}

TEST(JitColumnReductions, EveryReductionInVectorRegisters) {
  for (ag::DType d : {ag::float32, ag::float64})
    for (int64_t width : {16, 32, 64}) {
      const Tensor x = ag::cast(sample(ag::float32, {300, width}, 1, Values::Moderate), d);
      const Tensor p = ag::cast(sample(ag::float32, {300, 1}, 2, Values::Moderate), d);
      const std::string tag = std::string(ag::dtype_name(d)) + " x " + std::to_string(width);
      auto sums = [](Tensor v, Tensor q) {
        return std::make_tuple(ag::reduce_sum(v * q, {0}), ag::reduce_mean(v, {0}, true), ag::reduce_max(v - q, {0}),
                               ag::reduce_min(v, {0}), ag::reduce_prod(v * 0.01 + 1.0, {0}));
      };
      agtest::expect_three_way("column reductions, " + tag, sums, kTol, x, p);
      // Sixteen columns are at most 8 vectors on every x86-64 level (2 doubles a vector on SSE);
      // wider rows take the vector form only where vectors are wide enough.
      auto sum_only = [](Tensor v, Tensor q) { return ag::reduce_sum(v * q, {0}); };
      auto f = ag::function(sum_only);
      if (width == 16) EXPECT_TRUE(has_column_vectors(f, x, p)) << tag;
    }
}

TEST(JitColumnReductions, NanAndSignedZerosStayPerColumn) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(64 * 16, 1.0f);
  v[5 * 16 + 3] = nan;
  v[7 * 16 + 4] = -0.0f;
  v[9 * 16 + 9] = std::numeric_limits<float>::infinity();
  const Tensor x = ag::constant(v, {64, 16});
  auto f = [](Tensor t) { return std::make_tuple(ag::reduce_sum(t, {0}), ag::reduce_max(t, {0}), ag::reduce_min(t - 1.0f, {0})); };
  agtest::expect_three_way("special values", f, {}, x);
}

TEST(JitColumnReductions, LargeOperandsSplitIntoBlocksOfRowsOnTwoThreads) {
  // [3 * 2^17 / 16 rows, 16]: the pool's column split (blocks of rows, each a partial row in
  // vector registers), the same values on one thread and two.
  const Tensor x = sample(ag::float32, {24576, 16}, 3, Values::Moderate);
  auto f = [](Tensor t) { return ag::reduce_mean(t * t, {0}); };
  for (int threads : {1, 2}) {
    const ag::detail::ScopedNumThreads scoped(threads);
    agtest::expect_three_way("large, " + std::to_string(threads) + " threads", f, {.rtol = 1e-4, .atol = 1e-5}, x);
  }
  auto jit = ag::function(f);
  EXPECT_TRUE(has_column_vectors(jit, x));
  EXPECT_TRUE(agtest::ir_calls(jit.get_concrete_function(x).llvm_ir(true), "agc_rt_parallel_for"));
}

TEST(JitColumnReductions, ABiasGradientUnderATapeInsideTheTraceAndOutside) {
  // A dense layer's bias gradient is the column sum of the output gradient over the batch. (A sum
  // of 256 terms from tanh, whose compiled and eager forms differ by a few ulps: 1e-4.)
  const agtest::Tol tol{.rtol = 1e-4, .atol = 1e-4};
  const Tensor x = sample(ag::float32, {256, 8}, 5, Values::Moderate), w = sample(ag::float32, {8, 16}, 6, Values::Moderate);
  const Tensor b = sample(ag::float32, {16}, 7, Values::Moderate);
  auto layer = [](Tensor xs, Tensor ws, Tensor bs) { return ag::reduce_sum(ag::square(ag::tanh(ag::matmul(xs, ws) + bs))); };
  auto inside = [&](Tensor xs, Tensor ws, Tensor bs) {
    ag::GradientTape tape;
    tape.watch(bs);
    return tape.gradient(layer(xs, ws, bs), bs);
  };
  agtest::expect_three_way("bias gradient, tape inside", inside, tol, x, w, b);
  auto jit = ag::function(inside);
  EXPECT_TRUE(has_column_vectors(jit, x, w, b));
  auto outside = [&](auto&& f) {
    ag::GradientTape tape;
    tape.watch(b);
    return tape.gradient(f(x, w, b), b);
  };
  auto staged = ag::function(layer);
  agtest::expect_same(outside(layer), outside(staged), tol, "bias gradient, tape outside");
}

TEST(JitColumnReductions, WidthsThatAreNotWholeVectorsKeepTheScalarWalk) {
  const Tensor x = sample(ag::float32, {100, 13}, 4, Values::Moderate);
  auto f = [](Tensor t) { return ag::reduce_sum(t, {0}); };
  agtest::expect_three_way("13 columns", f, kTol, x);
  auto jit = ag::function(f);
  EXPECT_FALSE(has_column_vectors(jit, x));
}

}  // namespace
