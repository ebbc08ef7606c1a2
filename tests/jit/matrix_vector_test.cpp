// Matrix-vector products whose matrix has a short static side (lower_matvec.cpp) are reductions
// in vector registers instead of a GEMM call: A v a row reduction, A^T v and u^T B column
// reductions in independent chains. Three-way against the eager product (Eigen) for both float
// dtypes, every orientation, row counts that leave rows after the last group, unknown row counts,
// and the logistic regression they were made for, with its tape inside the trace (in a staged
// loop) and outside; the form checked in the IR (no GEMM call).
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "loop_splits_mode.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using agtest::sample;
using agtest::Values;

const agtest::Tol kTol{.rtol = 1e-5, .atol = 1e-5};

std::string ir_of(auto& f, const auto&... args) { return f.get_concrete_function(args...).llvm_ir(false); }

// Reduced in vector registers, without the runtime's GEMM.
bool reduced_in_vectors(const std::string& ir) {
  return !agtest::ir_calls(ir, "agc_rt_gemm") &&
         (ir.find("%rows.kept") != std::string::npos || ir.find("columns:") != std::string::npos);
}

// A v over rows of 16 floats and A^T v into 16 floats: the column form on every x86-64 level,
// the row form where 16 floats are at most 2 vectors (AVX2, AVX-512), else the GEMM for A v.
void expect_both_forms_of_16_floats(const std::string& ir) {
  const bool rows_fit = 64 <= 2 * agtest::jit_vector_bytes();
  EXPECT_NE(ir.find("columns:"), std::string::npos);
  EXPECT_EQ(ir.find("%rows.kept") != std::string::npos, rows_fit);
  EXPECT_EQ(agtest::ir_calls(ir, "agc_rt_gemm"), !rows_fit);
}

TEST(JitMatrixVector, EveryOrientationOfEveryShortSide) {
  for (ag::DType d : {ag::float32, ag::float64})
    for (int64_t width : {16, 32, 128})
      for (int64_t rows : {4096, 5003}) {
        const std::string tag = std::string(ag::dtype_name(d)) + " " + std::to_string(rows) + " x " + std::to_string(width);
        const Tensor a = ag::cast(sample(ag::float32, {rows, width}, 1, Values::Moderate), d);
        const Tensor v = ag::cast(sample(ag::float32, {width, 1}, 2, Values::Moderate), d);
        // Terms below 1 in magnitude: A^T r sums `rows` of them in float, in an order of its
        // own (Eigen's is another), so the sums may differ by a few of their ulps.
        const Tensor r = ag::cast(sample(ag::float32, {rows, 1}, 3, Values::Moderate) * 0.1f, d);
        auto a_v = [](Tensor m, Tensor x) { return ag::matmul(m, x); };                      // [rows, 1]
        auto vt_at = [](Tensor m, Tensor x) { return ag::matmul(x, m, true, true); };        // [1, rows]
        auto at_r = [](Tensor m, Tensor y) { return ag::matmul(m, y, true); };               // [width, 1]
        auto rt_a = [](Tensor m, Tensor y) { return ag::matmul(y, m, true, false); };        // [1, width]
        agtest::expect_three_way("A v, " + tag, a_v, kTol, a, v);
        agtest::expect_three_way("v^T A^T, " + tag, vt_at, kTol, a, v);
        const agtest::Tol long_sums{.rtol = 1e-5, .atol = 1e-4};
        agtest::expect_three_way("A^T r, " + tag, at_r, long_sums, a, r);
        agtest::expect_three_way("r^T A, " + tag, rt_a, long_sums, a, r);
        auto f1 = ag::function(a_v), f2 = ag::function(vt_at), f3 = ag::function(at_r), f4 = ag::function(rt_a);
        // The row form takes rows of up to 2 vectors, the column form up to 8 (Emitter::
        // kMaxRowVectors, kMaxColumnVectors); wider ones keep the GEMM.
        const int64_t bytes = width * static_cast<int64_t>(ag::dtype_size(d)), vector = agtest::jit_vector_bytes();
        const bool rows_fit = bytes % vector == 0 && bytes <= 2 * vector, columns_fit = bytes % vector == 0 && bytes <= 8 * vector;
        EXPECT_EQ(reduced_in_vectors(ir_of(f1, a, v)), rows_fit) << tag;
        EXPECT_EQ(reduced_in_vectors(ir_of(f2, a, v)), rows_fit) << tag;
        EXPECT_EQ(reduced_in_vectors(ir_of(f3, a, r)), columns_fit) << tag;
        EXPECT_EQ(reduced_in_vectors(ir_of(f4, a, r)), columns_fit) << tag;
      }
}

TEST(JitMatrixVector, UnknownRowCountsAndSpecialValues) {
  auto f = [](Tensor m, Tensor x, Tensor y) { return std::make_tuple(ag::matmul(m, x), ag::matmul(m, y, true)); };
  const ag::FunctionOptions options{.input_signature = {ag::TensorSpec({-1, 16}, ag::float32, "m"),
                                                        ag::TensorSpec({16, 1}, ag::float32, "x"),
                                                        ag::TensorSpec({-1, 1}, ag::float32, "y")}};
  auto jit = ag::function(f, options);
  for (int64_t rows : {0, 1, 15, 33, 4099}) {
    Tensor m = sample(ag::float32, {rows, 16}, 4, Values::Moderate);
    const Tensor x = sample(ag::float32, {16, 1}, 5, Values::Moderate), y = sample(ag::float32, {rows, 1}, 6, Values::Moderate);
    agtest::expect_three_way_with("unknown rows, " + std::to_string(rows), f, options, kTol, m, x, y);
    if (rows > 20) {  // a NaN in one row, an Inf in another: each stays in its own output
      std::vector<float> values = m.to_vector<float>();
      values[3 * 16 + 2] = std::numeric_limits<float>::quiet_NaN();
      values[19 * 16 + 7] = std::numeric_limits<float>::infinity();
      m = ag::constant(values, {rows, 16});
      agtest::expect_same(f(m, x, y), jit(m, x, y), kTol, "special values, " + std::to_string(rows));
    }
  }
  EXPECT_EQ(jit.stats().traces, 1);
  expect_both_forms_of_16_floats(ir_of(jit, sample(ag::float32, {64, 16}, 4), sample(ag::float32, {16, 1}, 5),
                                       sample(ag::float32, {64, 1}, 6)));
}

// The logistic regression of bench/apps: each step's gradient from a tape inside the staged loop.
Tensor train(Tensor x, Tensor y, Tensor w, Tensor steps) {
  Tensor i = 0;
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   ag::GradientTape tape;
                   tape.watch(w);
                   Tensor z = ag::matmul(x, w);
                   Tensor loss = ag::reduce_mean(ag::softplus(z) - y * z);
                   w = w - 0.5f * tape.gradient(loss, w);
                   i += 1;
                 },
                 ag::state(w, i), {"w", "i"}, AG_SOURCE_LOC("matrix_vector_test.cpp", 60));
  return w;
}

TEST(JitMatrixVector, LogisticRegressionWithTheTapeInsideAStagedLoopAndOutside) {
  const Tensor x = sample(ag::float32, {4096, 16}, 7, Values::Moderate) * 0.1f;
  const Tensor y = ag::cast(ag::reduce_sum(x, {1}, true) > 0.0f, ag::float32);
  const Tensor w0 = ag::zeros({16, 1});
  const Tensor steps = ag::constant(int32_t{25});
  agtest::expect_three_way("25 steps, tape inside", train, {.rtol = 1e-4, .atol = 1e-5}, x, y, w0, steps);
  auto jit = ag::function(train);
  expect_both_forms_of_16_floats(ir_of(jit, x, y, w0, steps));
  // Outside: the gradient of a compiled loss.
  auto loss = [](Tensor xs, Tensor ys, Tensor w) {
    Tensor z = ag::matmul(xs, w);
    return ag::reduce_mean(ag::softplus(z) - ys * z);
  };
  const Tensor w = sample(ag::float32, {16, 1}, 8, Values::Moderate);
  auto staged = ag::function(loss);
  auto gradient = [&](auto&& f) {
    ag::GradientTape tape;
    tape.watch(w);
    return tape.gradient(f(x, y, w), w);
  };
  agtest::expect_same(gradient(loss), gradient(staged), kTol, "tape outside");
}

// Conjugate gradients' product: a matrix too wide for the vector forms takes the runtime's GEMM,
// which splits a matrix-vector product of 2^17 elements over the pool in blocks of rows fixed by
// the shape: compiled, the same bits on 1 and 2 threads, the eager ones, and the pool split.
TEST(JitMatrixVector, WideProductsSplitOverThePoolWithTheSameBits) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Tensor a = ag::cast(sample(ag::float32, {1003, 300}, 13, Values::Moderate), ag::float64);
  const Tensor v = ag::cast(sample(ag::float32, {300, 1}, 14, Values::Moderate), ag::float64);
  auto f = [](Tensor m, Tensor x) { return ag::matmul(m, x) * 0.5; };
  auto jit = ag::function(f);
  EXPECT_TRUE(agtest::ir_calls(ir_of(jit, a, v), "agc_rt_gemm"));
  Tensor one;
  {
    const ag::detail::ScopedNumThreads scoped(1);
    one = jit(a, v);
  }
  const ag::detail::ScopedNumThreads scoped(2);
  const int64_t before = ag::detail::parallel_loops_split();
  EXPECT_TRUE(agtest::same_tensor(jit(a, v), one, {.rtol = 0, .atol = 0}));
  EXPECT_GT(ag::detail::parallel_loops_split(), before);
  EXPECT_TRUE(agtest::same_tensor(f(a, v), one, {.rtol = 0, .atol = 0}));
}

TEST(JitMatrixVector, ProductsThatAreNotMatrixVectorKeepTheGemm) {
  const Tensor a = sample(ag::float32, {4096, 16}, 9, Values::Moderate), b = sample(ag::float32, {16, 2}, 10, Values::Moderate);
  auto f = [](Tensor m, Tensor x) { return ag::matmul(m, x); };
  agtest::expect_three_way("two columns", f, kTol, a, b);
  auto jit = ag::function(f);
  EXPECT_TRUE(agtest::ir_calls(ir_of(jit, a, b), "agc_rt_gemm"));
  // A short side that is not whole vectors: 13 columns.
  const Tensor c = sample(ag::float32, {4096, 13}, 11, Values::Moderate), v = sample(ag::float32, {13, 1}, 12, Values::Moderate);
  agtest::expect_three_way("13 columns", f, kTol, c, v);
  EXPECT_TRUE(agtest::ir_calls(ir_of(jit, c, v), "agc_rt_gemm"));
}

}  // namespace
