// matmul's transpose flags compiled: every combination on the small inline kernels, on GEMM and
// on shapes known only at run time, three-way; matmul(transpose(a), b) left as written (the
// eager code's rounding); a matmul's gradient in a staged loop under a tape, whose loop body
// then holds no Transpose; and an MLP layer's products, which the GEMM halves on two threads.
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "loop_splits_mode.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::sample;
using agtest::Values;

ag::Shape stored(ag::Shape s, bool transposed) {
  if (transposed) std::swap(s[s.rank() - 1], s[s.rank() - 2]);
  return s;
}

TEST(JitMatMulTranspose, EveryFlagThreeWay) {
  struct Case {
    ag::Shape a, b;
    ag::DType dtype;
  };
  const Case cases[] = {{{5, 7}, {7, 6}, ag::float32},          // the inline register-blocked kernel
                        {{2, 3, 4}, {4, 9}, ag::float64},       // inline, batched and broadcast
                        {{80, 96}, {96, 70}, ag::float32},      // GEMM
                        {{3, 5}, {5, 4}, ag::int32}};
  for (const Case& c : cases)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const Tensor a = sample(c.dtype, stored(c.a, ta), 1, Values::Moderate);
        const Tensor b = sample(c.dtype, stored(c.b, tb), 2, Values::Moderate);
        auto f = [ta, tb](Tensor x, Tensor y) { return ag::matmul(x, y, ta, tb); };
        const std::string what = "matmul " + c.a.str() + (ta ? "^T" : "") + " x " + c.b.str() + (tb ? "^T" : "");
        agtest::expect_three_way(what, f, {.rtol = 1e-5, .atol = 1e-5}, a, b);
        // The same with every dim known only at run time (the GEMM call with flags).
        const std::vector<TensorSpec> specs = {TensorSpec(ag::Shape(std::vector<int64_t>(c.a.rank(), -1)), c.dtype),
                                               TensorSpec(ag::Shape(std::vector<int64_t>(c.b.rank(), -1)), c.dtype)};
        agtest::expect_three_way_with(what + " (dynamic)", f, {.input_signature = specs}, {.rtol = 1e-5, .atol = 1e-5}, a, b);
      }
}

TEST(JitMatMulTranspose, ATransposeWrittenOutStaysAndTheFlagMakesNone) {
  auto written_out = [](Tensor a, Tensor b) { return ag::matmul(ag::transpose(a), b); };
  auto flagged = [](Tensor a, Tensor b) { return ag::matmul(a, b, true); };
  const Tensor a = sample(ag::float32, {96, 80}, 3, Values::Moderate), b = sample(ag::float32, {96, 70}, 4, Values::Moderate);
  const std::string plan = agtest::fused_plan(written_out, {}, a, b);
  ASSERT_FALSE(plan.empty());
  EXPECT_NE(plan.find("Transpose("), std::string::npos) << plan;
  EXPECT_EQ(agtest::plan_line(plan, "MatMul").find("transpose_a"), std::string::npos) << plan;
  const std::string flag_plan = agtest::fused_plan(flagged, {}, a, b);
  EXPECT_EQ(flag_plan.find("Transpose("), std::string::npos) << flag_plan;
  // Written out, the compiled result is the eager one bit for bit (the same kernels in order).
  agtest::expect_three_way("matmul(transpose(a), b)", written_out, {.rtol = 0, .atol = 0}, a, b);
  agtest::expect_three_way("matmul(a, b, transpose_a)", flagged, {.rtol = 0, .atol = 0}, a, b);
}

TEST(JitMatMulTranspose, GradientInAStagedLoopMakesNoTranspose) {
  auto body = [](Tensor w, Tensor x) {
    ag::GradientTape tape;
    tape.watch(w);
    auto [i, h] = ag::while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
                                 [&](const Tensor& i, const Tensor& h) { return std::make_tuple(i + 1, ag::tanh(ag::matmul(h, w))); },
                                 std::make_tuple(ag::constant(0), x));
    const Tensor loss = ag::reduce_sum(h * h);
    return std::make_tuple(loss, tape.gradient(loss, w));
  };
  const Tensor w = sample(ag::float64, {4, 4}, 5, Values::Moderate), x = sample(ag::float64, {2, 4}, 6, Values::Moderate);
  agtest::expect_three_way("loop gradient", body, {.rtol = 1e-9, .atol = 1e-12}, w, x);
  const std::string plan = agtest::fused_plan(body, {}, w, x);
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan.find("Transpose("), std::string::npos) << plan;
  EXPECT_NE(plan.find("transpose_"), std::string::npos) << plan;
}

// An MLP layer's forward product (64x784x256: halves of columns) and its weight gradient
// (x^T dy, 784x64x256: halves of rows), the tape inside the trace and outside it: compiled on
// 1 and 2 threads and eagerly, the same bits (the halves are fixed by the shape), and split.
TEST(JitMatMulTranspose, AnMlpLayersProductsHalveWithTheSameBitsUnderATape) {
  const agtest::ScopedLoopSplits by_size(ag::detail::LoopSplitsMode::BySize);  // a split on every call
  const Tensor x = sample(ag::float32, {64, 784}, 21, Values::Moderate), w = sample(ag::float32, {784, 256}, 22, Values::Moderate);
  auto inside = [](Tensor xs, Tensor ws) {
    ag::GradientTape tape;
    tape.watch(ws);
    const Tensor y = ag::matmul(xs, ws);
    return tape.gradient(ag::reduce_sum(y * y), ws);  // dw = x^T (2 y): no reduction before the product
  };
  auto forward = ag::function([](Tensor xs, Tensor ws) { return ag::matmul(xs, ws); });
  auto outside = [&](Tensor ws) {
    ag::GradientTape tape;
    tape.watch(ws);
    const Tensor y = forward(x, ws);
    return tape.gradient(ag::reduce_sum(y * y), ws);
  };
  auto jit = ag::function(inside);
  Tensor one, one_forward;
  {
    const ag::detail::ScopedNumThreads scoped(1);
    one = jit(x, w);
    one_forward = forward(x, w);
  }
  const ag::detail::ScopedNumThreads scoped(2);
  const agtest::Tol exact{.rtol = 0, .atol = 0};
  const int64_t before = ag::detail::parallel_loops_split();
  EXPECT_TRUE(agtest::same_tensor(one, jit(x, w), exact));
  EXPECT_GE(ag::detail::parallel_loops_split(), before + 2) << "the forward product and the gradient's, in halves";
  EXPECT_TRUE(agtest::same_tensor(one_forward, forward(x, w), exact));
  EXPECT_TRUE(agtest::same_tensor(one, inside(x, w), exact)) << "eager";
  EXPECT_TRUE(agtest::same_tensor(one, outside(w), exact)) << "the tape outside the trace";
}

}  // namespace
