// Differential tests of every elementwise op: eager == interpreter == JIT over dtypes x shapes
// (scalars, empty tensors, broadcasting), including NaN/inf/-0 and integer extremes.
#include <functional>

#include "jit_test_util.h"
#include "test_data.h"

namespace {

using agtest::Values;
using Binary = std::function<ag::Tensor(ag::Tensor, ag::Tensor)>;

// Unary ops are grouped per dtype family into one function with many outputs: one compile
// covers every op (and multi-output functions get exercised on the way).
auto numeric_unary = [](ag::Tensor x) {
  return std::tuple{ag::identity(x), -x, ag::abs(x), ag::square(x), ag::relu(x), ag::sign(x)};
};
auto float_unary = [](ag::Tensor x) {
  return std::tuple{ag::sqrt(x), ag::floor(x), ag::ceil(x), ag::round(x), ag::exp(x), ag::log(x)};
};
auto transcendental = [](ag::Tensor x) {
  return std::tuple{ag::exp(x),  ag::tanh(x), ag::sigmoid(x), ag::softplus(x),
                    ag::sin(x),  ag::cos(x),  ag::erf(x),     ag::log(ag::abs(x) + 0.5)};
};
// The libm-backed functions (libmvec's variants in vector loops), each inside its domain for
// inputs |x| < 10: sin/cos of x / 10 are in [-1, 1].
auto libm_unary = [](ag::Tensor x) {
  const ag::Tensor unit = ag::sin(x / 10);  // (-1, 1)
  const ag::Tensor positive = ag::abs(x) + 0.5;
  return std::tuple{ag::erfc(x),        ag::log1p(positive), ag::expm1(x),        ag::tan(unit),
                    ag::atan(x),        ag::asin(unit),      ag::acos(unit),      ag::sinh(x),
                    ag::cosh(x),        ag::asinh(x),        ag::acosh(positive + 1), ag::atanh(unit * 0.99),
                    ag::rsqrt(positive), ag::atan2(x, unit)};
};

TEST(JitElementwise, UnaryOps) {
  uint64_t seed = 1;
  for (const ag::Shape& s : agtest::unary_shapes()) {
    for (ag::DType d : agtest::numeric_dtypes())
      agtest::expect_three_way("numeric unary " + std::string(ag::dtype_name(d)) + s.str(), numeric_unary, {},
                               agtest::sample(d, s, seed++));
    for (ag::DType d : agtest::float_dtypes()) {
      agtest::expect_three_way("float unary " + std::string(ag::dtype_name(d)) + s.str(), float_unary, {},
                               agtest::sample(d, s, seed++));
      const ag::Tensor x = ag::cast(agtest::sample(d, s, seed++, Values::Moderate), d);
      agtest::expect_three_way("transcendental " + std::string(ag::dtype_name(d)) + s.str(), transcendental, {}, x);
      agtest::expect_three_way("libm " + std::string(ag::dtype_name(d)) + s.str(), libm_unary, {}, x);
    }
    agtest::expect_three_way("logical_not" + s.str(), [](ag::Tensor x) { return ag::logical_not(x); }, {},
                             agtest::sample(ag::bool_, s, seed++));
  }
}

TEST(JitElementwise, Casts) {
  const std::vector<ag::DType> all = {ag::bool_, ag::int32, ag::int64, ag::float32, ag::float64};
  uint64_t seed = 100;
  for (ag::DType from : all)
    for (ag::DType to : all)
      for (const ag::Shape& s : {ag::Shape{}, ag::Shape{0}, ag::Shape{40}, ag::Shape{3, 7}}) {
        const ag::Tensor x = agtest::sample(from, s, seed++, Values::Any);
        auto fn = [to](ag::Tensor t) { return ag::cast(t, to); };
        agtest::expect_three_way(fmt::format("cast {} -> {} {}", ag::dtype_name(from), ag::dtype_name(to), s.str()), fn, {}, x);
      }
  // Saturation: out-of-range floats clamp, NaN becomes 0 (llvm.fptosi.sat semantics).
  auto to_int = [](ag::Tensor t) { return ag::cast(t, ag::int32); };
  const ag::Tensor big = ag::constant(std::vector<float>{3e9f, -3e9f, NAN, INFINITY, -INFINITY, 2.5f, -2.5f}, {7});
  agtest::expect_three_way("saturating cast", to_int, {}, big);
  auto f = ag::function(to_int);
  EXPECT_EQ(f(big).to_vector<int64_t>(), (std::vector<int64_t>{INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 2, -2}));
}

auto arithmetic = [](ag::Tensor a, ag::Tensor b) {
  return std::tuple{a + b, a - b, a * b, ag::maximum(a, b), ag::minimum(a, b)};
};
auto comparisons = [](ag::Tensor a, ag::Tensor b) {
  return std::tuple{a < b, a <= b, a > b, a >= b, a == b, a != b};
};
auto divisions = [](ag::Tensor a, ag::Tensor b) {
  return std::tuple{a / b, a % b, ag::floordiv(a, b), ag::floormod(a, b)};
};
auto powers = [](ag::Tensor a, ag::Tensor b) { return ag::pow(a, b); };
auto logical = [](ag::Tensor a, ag::Tensor b) {
  return std::tuple{ag::logical_and(a, b), ag::logical_or(a, b), ag::logical_xor(a, b), a == b, a != b};
};

// All binary ops of one dtype over every broadcast pair (both operand orders).
void binary_ops(ag::DType d, uint64_t seed) {
  for (const auto& [sa, sb] : agtest::binary_shapes())
    for (int swap = 0; swap < (sa == sb ? 1 : 2); ++swap) {
      const ag::Shape& s1 = swap ? sb : sa;
      const ag::Shape& s2 = swap ? sa : sb;
      const std::string what = std::string(ag::dtype_name(d)) + " " + s1.str() + " " + s2.str();
      if (d == ag::bool_) {
        const ag::Tensor a = agtest::sample(d, s1, seed), b = agtest::sample(d, s2, seed + 1);
        seed += 2;
        agtest::expect_three_way("logical " + what, logical, {}, a, b);
        continue;
      }
      const ag::Tensor a = agtest::sample(d, s1, seed), b = agtest::sample(d, s2, seed + 1);
      seed += 2;
      agtest::expect_three_way("arithmetic " + what, arithmetic, {}, a, b);
      agtest::expect_three_way("comparisons " + what, comparisons, {}, a, b);
      const ag::Tensor divisor = agtest::sample(d, s2, seed++, ag::is_floating(d) ? Values::Any : Values::NonZero);
      agtest::expect_three_way("divisions " + what, divisions, {}, a, divisor);
      const bool fp = ag::is_floating(d);
      const ag::Tensor base = fp ? agtest::sample(d, s1, seed, Values::Positive) : a;
      const ag::Tensor exponent = agtest::sample(d, s2, seed + 1, fp ? Values::Moderate : Values::SmallExp);
      seed += 2;
      agtest::expect_three_way("pow " + what, powers, {}, base, exponent);
    }
}

TEST(JitElementwise, BinaryInt32) { binary_ops(ag::int32, 1000); }
TEST(JitElementwise, BinaryInt64) { binary_ops(ag::int64, 2000); }
TEST(JitElementwise, BinaryFloat32) { binary_ops(ag::float32, 3000); }
TEST(JitElementwise, BinaryFloat64) { binary_ops(ag::float64, 4000); }
TEST(JitElementwise, BinaryBool) { binary_ops(ag::bool_, 5000); }

TEST(JitElementwise, IntegerDivisionEdgeCases) {
  // INT_MIN / -1 and INT_MIN % -1 are defined (wrap to INT_MIN and 0), like the eager kernels.
  const ag::Tensor a = ag::constant(std::vector<int32_t>{INT32_MIN, INT32_MIN, 7, -7, 7, -7, 0}, {7});
  const ag::Tensor b = ag::constant(std::vector<int32_t>{-1, 1, 2, 2, -2, -2, -3}, {7});
  for (auto fn : std::vector<Binary>{[](ag::Tensor x, ag::Tensor y) { return x / y; },
                                     [](ag::Tensor x, ag::Tensor y) { return x % y; },
                                     [](ag::Tensor x, ag::Tensor y) { return ag::floordiv(x, y); },
                                     [](ag::Tensor x, ag::Tensor y) { return ag::floormod(x, y); }})
    agtest::expect_three_way("int division edges", fn, {}, a, b);
  auto div = ag::function([](ag::Tensor x, ag::Tensor y) { return x / y; });
  EXPECT_EQ(div(a, b).to_vector<int64_t>()[0], INT32_MIN);
}

TEST(JitElementwise, SelectBroadcastsThreeWays) {
  uint64_t seed = 5000;
  const std::vector<std::tuple<ag::Shape, ag::Shape, ag::Shape>> shapes = {
      {{}, {}, {}}, {{4}, {4}, {4}}, {{3, 1}, {1, 4}, {}}, {{2, 3}, {3}, {2, 1}}, {{0}, {0}, {1}}, {{5}, {}, {5}}};
  auto fn = [](ag::Tensor c, ag::Tensor x, ag::Tensor y) { return ag::where(c, x, y); };
  for (ag::DType d : {ag::bool_, ag::int32, ag::int64, ag::float32, ag::float64})
    for (const auto& [sc, sx, sy] : shapes) {
      const ag::Tensor c = agtest::sample(ag::bool_, sc, seed++), x = agtest::sample(d, sx, seed++), y = agtest::sample(d, sy, seed++);
      agtest::expect_three_way(fmt::format("where {} {} {} {}", ag::dtype_name(d), sc.str(), sx.str(), sy.str()), fn, {}, c, x, y);
    }
}

// A bool tensor in memory (an argument, a mask computed once) read by a float loop: agc's own
// vector code loads its bytes a vector at a time (or one byte broadcast along a row) and
// compares them, with the loop's remainder masked. Before, such a loop was scalar code.
TEST(JitElementwise, BoolBuffersInVectorLoops) {
  auto fn = [](ag::Tensor c, ag::Tensor x, ag::Tensor y) {
    return std::tuple{ag::where(c, x, y), ag::where(ag::logical_and(c, x > 0), x * 2, y - x)};
  };
  uint64_t seed = 7000;
  const std::vector<std::tuple<ag::Shape, ag::Shape>> shapes = {{{1000}, {1000}}, {{37, 1}, {37, 48}}, {{48}, {37, 48}}};
  for (ag::DType d : {ag::float32, ag::float64})
    for (const auto& [sc, sx] : shapes) {
      const ag::Tensor c = agtest::sample(ag::bool_, sc, seed++), x = agtest::sample(d, sx, seed++), y = agtest::sample(d, sx, seed++);
      agtest::expect_three_way(fmt::format("masks {} {} {}", ag::dtype_name(d), sc.str(), sx.str()), fn, {.rtol = 0, .atol = 0}, c, x, y);
      auto f = ag::function(fn);
      const std::string ir = f.get_concrete_function(c, x, y).llvm_ir(false);
      const int64_t lanes = agtest::jit_vector_bytes() / static_cast<int64_t>(ag::dtype_size(d));
      const std::string bytes = fmt::format("<{} x i8>", lanes), splat = fmt::format("<{} x i1>", lanes);
      EXPECT_NE(ir.find(sc.rank() == 2 ? splat : bytes), std::string::npos) << sc.str() << "\n" << ir;
    }
}

TEST(JitElementwise, WeakScalarsAndLongFusedChains) {
  auto chain = [](ag::Tensor x, ag::Tensor y) {
    ag::Tensor t = x;
    for (int i = 0; i < 12; ++i) t = ag::maximum(t * 1.5f - y, 0.25f) / (ag::abs(y) + 1.0f) + ag::cast(x > y, ag::float32);
    return ag::where(t > 1.0f, ag::sqrt(t), ag::exp(-t)) + ag::sigmoid(y) * ag::tanh(x);
  };
  const ag::Tensor x = agtest::sample(ag::float32, {4, 257}, 1, Values::Moderate);
  const ag::Tensor y = agtest::sample(ag::float32, {257}, 2, Values::Moderate);
  agtest::expect_three_way("long chain", chain, {.rtol = 1e-4, .atol = 1e-5}, x, y);
}

TEST(JitElementwise, FillAndFillLike) {
  auto fn = [](ag::Tensor x, ag::Tensor v) {
    return std::tuple{ag::zeros_like(x) + x, ag::ones_like(x) * 2.0f, ag::fill({3, 2}, v) + 1.0f, ag::fill({0}, v)};
  };
  agtest::expect_three_way("fills", fn, {}, agtest::sample(ag::float32, {3, 2}, 3), ag::Tensor(2.5f));
  auto ints = [](ag::Tensor x) { return std::tuple{ag::zeros_like(x), ag::ones_like(ag::cast(x, ag::bool_))}; };
  agtest::expect_three_way("int fills", ints, {}, agtest::sample(ag::int64, {5}, 4));
}

}  // namespace
