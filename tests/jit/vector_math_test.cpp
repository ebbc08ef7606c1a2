// libm functions in agc's own vector code (jit/src/lower/lower_math.cpp, vector_math_call):
// ops.def's `mvec` ops (exp, log, sin, cos, sigmoid, softplus, erf, log1p, the trigonometric and
// hyperbolic functions and their inverses) in a vector loop call glibc's libmvec variant of the
// register's width — 'e' (16 floats) on AVX-512, 'd' on AVX2, 'b' on SSE; ctest runs these under
// x86-64-v2 and -v3 too — and in a row reduction's tree (a softmax's exp over rows of 16). Checked
// in the lowered IR by the level the test runs at, and against eager (libm, lane by lane) within
// libmvec's documented error (4 ULP each way), special values included, float32 and float64, whole
// blocks and partial ones, one dim and two, on one thread and on the pool; in a nested Function
// in a staged loop, under a tape outside the compiled call and inside a trace.
#include <cmath>
#include <limits>
#include <string>

#include "ag/detail/parallel.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

struct MathOp {
  const char* name;
  Tensor (*fn)(const Tensor&);
  double lo, hi;  // a domain where the function is finite
};

// The ops (lambdas decay to function pointers: each op its own Function).
const MathOp kOps[] = {
    {"exp", [](const Tensor& x) { return ag::exp(x); }, -20, 20},
    {"log", [](const Tensor& x) { return ag::log(x); }, 1e-3, 50},
    {"sin", [](const Tensor& x) { return ag::sin(x); }, -10, 10},
    {"cos", [](const Tensor& x) { return ag::cos(x); }, -10, 10},
    {"sigmoid", [](const Tensor& x) { return ag::sigmoid(x); }, -30, 30},
    {"softplus", [](const Tensor& x) { return ag::softplus(x); }, -30, 30},
    {"erf", [](const Tensor& x) { return ag::erf(x); }, -4, 4},
    {"erfc", [](const Tensor& x) { return ag::erfc(x); }, -3, 3},
    {"log1p", [](const Tensor& x) { return ag::log1p(x); }, -0.9, 50},
    {"expm1", [](const Tensor& x) { return ag::expm1(x); }, -5, 5},
    {"tan", [](const Tensor& x) { return ag::tan(x); }, -1.5, 1.5},
    {"atan", [](const Tensor& x) { return ag::atan(x); }, -20, 20},
    {"asin", [](const Tensor& x) { return ag::asin(x); }, -0.99, 0.99},
    {"acos", [](const Tensor& x) { return ag::acos(x); }, -0.99, 0.99},
    {"sinh", [](const Tensor& x) { return ag::sinh(x); }, -8, 8},
    {"cosh", [](const Tensor& x) { return ag::cosh(x); }, -8, 8},
    {"asinh", [](const Tensor& x) { return ag::asinh(x); }, -20, 20},
    {"acosh", [](const Tensor& x) { return ag::acosh(x); }, 1.01, 20},
    {"atanh", [](const Tensor& x) { return ag::atanh(x); }, -0.99, 0.99},
};

// The libmvec variant name prefix for `d` at the level the test runs at: "_ZGVeN16v_".
std::string variant_prefix(ag::DType d) {
  const int64_t bytes = agtest::jit_vector_bytes();
  const char isa = bytes == 64 ? 'e' : bytes == 32 ? 'd' : 'b';
  return std::string("_ZGV") + isa + "N" + std::to_string(bytes / (d == ag::float32 ? 4 : 8)) + "v_";
}

// libmvec against libm, each within 4 ULP of the truth: 8 ULP of the result apart at most
// (16 in float32, whose ULP is 2^-23 of the leading power of two), and an absolute floor for
// results near zero (sin near pi, log near 1).
agtest::Tol tolerance(ag::DType d) {
  return d == ag::float32 ? agtest::Tol{.rtol = 1e-6, .atol = 1e-7} : agtest::Tol{.rtol = 2e-15, .atol = 1e-16};
}

class VectorMath : public ::testing::Test {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
};

TEST_F(VectorMath, EachFunctionCallsItsLibmvecVariantAndAgreesWithEager) {
  for (const MathOp& op : kOps) {
    for (ag::DType d : {ag::float32, ag::float64}) {
      for (int64_t n : {16, 21, 40, 1000}) {
        const std::string what = std::string(op.name) + " " + std::string(ag::dtype_name(d)) + " n=" + std::to_string(n);
        const Tensor x = ag::random_uniform({n}, d, op.lo, op.hi, static_cast<uint64_t>(n) * 7 + 1);
        auto f = ag::function(op.fn);
        const std::string ir = f.get_concrete_function(x).llvm_ir(false);
        const std::string libm = std::string(op.name == std::string("sigmoid") || op.name == std::string("softplus") ? "exp" : op.name);
        EXPECT_TRUE(agtest::ir_calls(ir, variant_prefix(d) + libm)) << what << ": no libmvec call " << variant_prefix(d) << libm;
        EXPECT_NE(ir.find("load <"), std::string::npos) << what << ": not a vector loop";
        agtest::expect_same(op.fn(x), f(x), tolerance(d), what);
      }
    }
  }
}

TEST_F(VectorMath, SpecialValuesAreEagersInEveryLane) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v = {nan, inf, -inf, 0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f, -1.0f, 0.5f, -0.5f, 100.0f, -100.0f,
                                1e30f, -1e30f, 2.0f, nan, -0.0f, 88.8f, -104.0f, 3.0f};  // 21: a block and a partial one
  const Tensor x = ag::constant(v);
  for (const MathOp& op : kOps) {
    auto f = ag::function(op.fn);
    agtest::expect_same(op.fn(x), f(x), tolerance(ag::float32), std::string(op.name) + " special values");
    agtest::expect_same(op.fn(ag::cast(x, ag::float64)), f(ag::cast(x, ag::float64)), tolerance(ag::float64),
                        std::string(op.name) + " special values, float64");
  }
}

// Two dims with a broadcast row, and a chain around the call: the libmvec call inside a fused
// expression; a size past the pool's grain splits over two threads with the same values.
TEST_F(VectorMath, InsideFusedTwoDimensionalLoopsAndOnThePool) {
  auto gelu = [](const Tensor& x, const Tensor& b) {
    const Tensor y = x + b;
    return 0.5f * y * (1.0f + ag::erf(y * 0.70710678f));
  };
  const Tensor m = ag::random_uniform({37, 48}, ag::float32, -4, 4, 11), row = ag::random_uniform({48}, ag::float32, -1, 1, 12);
  auto f = ag::function(gelu);
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(m, row).llvm_ir(false), variant_prefix(ag::float32) + "erf"));
  // 1 + erf(y) cancels for y < -2: erf's few ULP of 1 become absolute errors of up to 4e-7 * |y|.
  agtest::expect_three_way("gelu rows", gelu, {.rtol = 1e-6, .atol = 4e-6}, m, row);

  const Tensor big = ag::random_uniform({1024, 300}, ag::float32, -5, 5, 13), bias = ag::random_uniform({300}, ag::float32, -1, 1, 14);
  auto g = ag::function([](const Tensor& x, const Tensor& b) { return ag::sigmoid(x * 2.0f + b) * ag::exp(-x); });
  Tensor one, two;
  {
    const ag::detail::ScopedNumThreads threads(1);
    one = g(big, bias);
  }
  {
    const ag::detail::ScopedNumThreads threads(2);
    two = g(big, bias);
  }
  EXPECT_TRUE(agtest::same_tensor(one, two, {.rtol = 0, .atol = 0})) << "the pool's split changed values";
  agtest::expect_same(ag::sigmoid(big * 2.0f + bias) * ag::exp(-big), one, tolerance(ag::float32), "sigmoid * exp on the pool");
}

// A softmax over rows of 16 and 32 floats: the max and the sum take the row tree
// (lower_reduce_vector.cpp) and exp(x - max) is one libmvec call per row register. Under a tape
// inside the trace too (the gradient's exp is the same form).
TEST_F(VectorMath, SoftmaxOverShortRowsCallsLibmvecAndItsGradientIsRight) {
  for (int64_t width : {16, 32}) {
    const Tensor x = ag::random_uniform({301, width}, ag::float32, -6, 6, static_cast<uint64_t>(width));
    auto softmax = [](const Tensor& t) {
      const Tensor e = ag::exp(t - ag::reduce_max(t, {1}, true));
      return e / ag::reduce_sum(e, {1}, true);
    };
    auto f = ag::function(softmax);
    EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(x).llvm_ir(false), variant_prefix(ag::float32) + "expf"))
        << "width " << width;
    agtest::expect_three_way("softmax width " + std::to_string(width), softmax, tolerance(ag::float32), x);
    auto grad = ag::function([&](const Tensor& t) {
      ag::GradientTape tape;
      tape.watch(t);
      const Tensor loss = ag::reduce_sum(softmax(t) * ag::range(0.f, static_cast<float>(width), 1.f));
      return tape.gradient(loss, t);
    });
    ag::GradientTape outside;
    outside.watch(x);
    const Tensor eager_loss = ag::reduce_sum(softmax(x) * ag::range(0.f, static_cast<float>(width), 1.f));
    agtest::expect_same(outside.gradient(eager_loss, x), grad(x), {.rtol = 1e-5, .atol = 1e-5}, "softmax gradient");
  }
}

// A softmax Function called from another one's staged loop (inlined into its trace: the loop's
// body is a vector loop calling libmvec), with the tape inside the trace and outside it.
TEST_F(VectorMath, InANestedFunctionInAStagedLoopUnderATape) {
  auto softmax = ag::function([](Tensor t) {
    const Tensor e = ag::exp(t - ag::reduce_max(t, {1}, true));
    return e / ag::reduce_sum(e, {1}, true);
  });
  auto refine = [&](Tensor t, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     t = ag::log1p(softmax(t * 2.0f)) + ag::sigmoid(t) * 0.5f;
                     i += 1;
                   },
                   ag::state(t, i), {"t", "i"}, AG_SOURCE_LOC("vector_math_test.cpp", 160));
    return t;
  };
  const Tensor x = ag::random_uniform({45, 16}, ag::float32, -3, 3, 21), n = ag::constant(int32_t{3});
  agtest::expect_three_way("nested softmax in a staged loop", refine, {.rtol = 1e-5, .atol = 1e-6}, x, n);
  auto f = ag::function(refine);
  EXPECT_TRUE(agtest::ir_calls(f.get_concrete_function(x, n).llvm_ir(false), variant_prefix(ag::float32) + "expf"));

  // d/dx of the loop's sum: the tape outside the compiled call, and inside another trace.
  auto total = [&](Tensor t) { return ag::reduce_sum(refine(t, n)); };
  ag::GradientTape eager_tape;
  eager_tape.watch(x);
  const Tensor eager = eager_tape.gradient(total(x), x);
  auto staged_total = ag::function(total);
  ag::GradientTape outside;
  outside.watch(x);
  agtest::expect_same(eager, outside.gradient(staged_total(x), x), {.rtol = 1e-4, .atol = 1e-5}, "tape outside");
  auto inside = ag::function([&](Tensor t) {
    ag::GradientTape tape;
    tape.watch(t);
    return tape.gradient(total(t), t);
  });
  agtest::expect_same(eager, inside(x), {.rtol = 1e-4, .atol = 1e-5}, "tape inside the trace");
}

}  // namespace
