// agc's own vector loops (jit/src/lower/lower_fused_vector.cpp): a float elementwise loop whose
// inner dim every operand reads contiguously or broadcasts is emitted as vector code, whole
// blocks plain and the last partial block of each row masked (AVX-512) or element by element. Checked: which loops take that form (the lowered IR loads
// vectors: "load <"), values bit for bit equal to the scalar loop LLVM vectorizes
// (AG_JIT_VECTOR_LOOPS=0) at every size around a block, special values, float64, broadcast
// operands, and eager == interpreter == JIT; a large loop's pool worker is compiled as emitted.
// ctest runs these under x86-64-v2 and -v3 too (SSE and AVX2 vectors, scalar remainders).
// libm functions in these loops: vector_math_test.cpp.
#include <cmath>
#include <limits>
#include <string>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

Tensor heavy(const Tensor& x) { return ag::relu(x * 1.5f + 0.25f) * 0.5f - ag::tanh(x); }
Tensor rounding(const Tensor& x) {
  return ag::where(x > 0.0f, ag::sqrt(ag::abs(x)), ag::floor(x) - ag::round(x) + ag::ceil(x * 0.5f));
}
Tensor extremes(const Tensor& x) {
  return ag::maximum(x, -x * 0.5f) + ag::minimum(x, 1.0f) * ag::sign(x) - ag::relu(-x) / (ag::abs(x) + 1.0f);
}
Tensor scaled(const Tensor& x, const Tensor& s) { return x * s + s; }  // s: one element, broadcast

template <class F, class... Args>
std::string lowered_ir(F fn, const Args&... args) {
  auto f = ag::function(fn);
  return f.get_concrete_function(args...).llvm_ir(false);
}

// The vector loop's values equal the scalar loop's, bit for bit, and eager's within tolerance.
template <class F, class... Args>
void expect_vector_loop_matches_scalar(const std::string& what, F fn, const Args&... args) {
  Tensor vector_result, scalar_result;
  {
    agtest::ScopedEnv on("AG_JIT_VECTOR_LOOPS", "1");
    EXPECT_NE(lowered_ir(fn, args...).find("load <"), std::string::npos) << what << ": not a vector loop";
    vector_result = ag::function(fn)(args...);
  }
  {
    agtest::ScopedEnv off("AG_JIT_VECTOR_LOOPS", "0");
    EXPECT_EQ(lowered_ir(fn, args...).find("load <"), std::string::npos) << what;
    scalar_result = ag::function(fn)(args...);
  }
  EXPECT_TRUE(agtest::same_tensor(scalar_result, vector_result, {.rtol = 0, .atol = 0})) << what;
  agtest::expect_three_way(what, fn, {.rtol = 1e-5, .atol = 1e-6}, args...);
}

class VectorLoops : public ::testing::Test {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
};

TEST_F(VectorLoops, EverySizeAroundABlockMatchesTheScalarLoop) {
  for (int64_t n : {16, 17, 23, 31, 32, 33, 47, 64, 100, 1013}) {
    const Tensor x = ag::random_uniform({n}, ag::float32, -4, 4, static_cast<uint64_t>(n));
    expect_vector_loop_matches_scalar("heavy, n=" + std::to_string(n), heavy, x);
    expect_vector_loop_matches_scalar("rounding, n=" + std::to_string(n), rounding, x);
  }
}

TEST_F(VectorLoops, SpecialValuesMatchTheScalarLoopAndEager) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> v = {nan, inf, -inf, 0.0f, -0.0f, tiny, -tiny, 1.0f, -1.0f, 3.5f, -2.5f, 0.5f, -0.5f, 1e30f, -1e30f,
                          2.5f, nan, -0.0f, 7.0f, -7.0f, 1e-30f};  // 21: one block and a partial one
  const Tensor x = ag::constant(v);
  expect_vector_loop_matches_scalar("extremes", extremes, x);
  expect_vector_loop_matches_scalar("rounding", rounding, x);
  agtest::expect_three_way("extremes, exact", extremes, {.rtol = 0, .atol = 0}, x);
}

TEST_F(VectorLoops, Float64AndBroadcastOperands) {
  const Tensor x = ag::random_uniform({37}, ag::float64, -3, 3, 41);
  expect_vector_loop_matches_scalar("float64", [](const Tensor& t) { return ag::relu(t * 2.0 - 1.0) + ag::sqrt(ag::abs(t)); }, x);
  const Tensor xf = ag::random_uniform({45}, ag::float32, -3, 3, 42);
  expect_vector_loop_matches_scalar("a one-element operand", scaled, xf, ag::constant({1.25f}));
  expect_vector_loop_matches_scalar("a scalar operand", scaled, xf, ag::constant(0.75f));
}

TEST_F(VectorLoops, OtherLoopsStayScalarForLLVMsVectorizer) {
  const Tensor x = ag::random_uniform({40}, ag::float32, -3, 3, 43);
  // Integer division checks each element; a 2-D walk with a broadcast row.
  const Tensor i = ag::random_uniform({40}, ag::int32, 1, 9, 44);
  EXPECT_EQ(lowered_ir([](const Tensor& t) { return t / 2 + 1; }, i).find("load <"), std::string::npos);
  // Dims unknown until the call: whether the inner dim broadcasts is decided at run time.
  auto add = [](const Tensor& a, const Tensor& b) { return a + b; };
  auto f = ag::function(add, {.input_signature = {ag::TensorSpec({-1, -1}, ag::float32), ag::TensorSpec({-1, -1}, ag::float32)}});
  const Tensor m = ag::random_uniform({8, 40}, ag::float32, -1, 1, 45), r = ag::random_uniform({1, 40}, ag::float32, -1, 1, 46);
  EXPECT_EQ(f.get_concrete_function().llvm_ir(false).find("load <"), std::string::npos);
  EXPECT_TRUE(agtest::same_tensor(m + r, f(m, r), {.rtol = 0, .atol = 0}));
  agtest::expect_three_way("exp", [](const Tensor& t) { return ag::exp(t) + 1.0f; }, {}, x);
}

// Walks of two or three dims: the inner dim in vector blocks, the outer ones as loops; operands
// broadcast along the inner dim (a column) or the outer ones (a row).
TEST_F(VectorLoops, OuterDimsLoopAroundTheInnerVectorBlocks) {
  const Tensor m = ag::random_uniform({8, 40}, ag::float32, -2, 2, 47);
  const Tensor row = ag::random_uniform({40}, ag::float32, -1, 1, 48), column = ag::random_uniform({8, 1}, ag::float32, -1, 1, 49);
  expect_vector_loop_matches_scalar("a row broadcast", [](const Tensor& a, const Tensor& b) { return ag::tanh(a * b + b); }, m, row);
  expect_vector_loop_matches_scalar("a column broadcast", [](const Tensor& a, const Tensor& c) { return ag::relu(a - c); }, m, column);
  const Tensor cube = ag::random_uniform({3, 5, 33}, ag::float32, -2, 2, 50), plane = ag::random_uniform({5, 33}, ag::float32, -1, 1, 51);
  expect_vector_loop_matches_scalar("three dims", [](const Tensor& a, const Tensor& p) { return ag::maximum(a, p) * 2.0f; }, cube, plane);
  const Tensor big = ag::random_uniform({1024, 300}, ag::float32, -2, 2, 52), bias = ag::random_uniform({300}, ag::float32, -1, 1, 53);
  expect_vector_loop_matches_scalar("rows over the pool", [](const Tensor& a, const Tensor& b) { return ag::relu(a + b); }, big, bias);
}

TEST_F(VectorLoops, ALargeLoopSplitsOverThePoolAsEmittedCode) {
  const Tensor x = ag::random_uniform({(1 << 20) + 5}, ag::float32, -3, 3, 46);
  auto f = ag::function(heavy);
  const std::string optimized = f.get_concrete_function(x).llvm_ir(true);
  EXPECT_TRUE(agtest::ir_calls(optimized, "agc_rt_parallel_for"));
  EXPECT_NE(optimized.find("\"agc-emitted-optimized\""), std::string::npos) << "the worker is not marked";
  expect_vector_loop_matches_scalar("heavy, 2^20 + 5", heavy, x);
}

}  // namespace
