// maximum, minimum, reduce_max and reduce_min order signed zeros as IEEE 754-2019 does (-0 < +0),
// eagerly, on the interpreter and in compiled code, bit for bit, whichever operand comes first
// and on every kernel path (scalars, vector rows, reductions of one row and across rows).
// Found by the program fuzzer: minimum(+0, -0) was +0 eagerly and -0 compiled.
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "jit_test_util.h"

namespace {

std::vector<uint32_t> bits(const ag::Tensor& t) {
  std::vector<uint32_t> out;
  for (float v : t.to_vector<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  return out;
}

constexpr float kPos = 0.0f, kNeg = -0.0f;

// 40 elements: long enough for every vector width's main loop and its tail.
std::vector<float> zeros(bool negative_first) {
  std::vector<float> v;
  for (int i = 0; i < 40; ++i) v.push_back((i % 2 == 0) == negative_first ? kNeg : kPos);
  return v;
}

ag::Tensor signed_zero_ops(ag::Tensor a, ag::Tensor b) {
  return ag::stack({ag::maximum(a, b), ag::minimum(a, b), ag::maximum(b, a), ag::minimum(b, a)});
}

ag::Tensor signed_zero_reductions(ag::Tensor m) {
  // Whole rows (one accumulator each), and down the columns (row by row accumulation).
  return ag::concat({ag::reduce_max(m, 1), ag::reduce_min(m, 1), ag::reduce_max(m, 0), ag::reduce_min(m, 0)}, 0);
}

TEST(JitSignedZeros, MaximumAndMinimumOrderZerosOnEveryBackend) {
  const ag::Tensor a = ag::constant(zeros(true)), b = ag::constant(zeros(false));
  const ag::Tensor eager = signed_zero_ops(a, b);
  const std::vector<uint32_t> got = bits(eager);
  for (size_t i = 0; i < got.size(); ++i) {
    const bool is_max = (i / 40) % 2 == 0;
    EXPECT_EQ(got[i], std::bit_cast<uint32_t>(is_max ? kPos : kNeg)) << "element " << i << " of " << eager.str();
  }
  // Scalars take another kernel path.
  EXPECT_EQ(bits(ag::maximum(ag::Tensor(kNeg), ag::Tensor(kPos)))[0], std::bit_cast<uint32_t>(kPos));
  EXPECT_EQ(bits(ag::minimum(ag::Tensor(kPos), ag::Tensor(kNeg)))[0], std::bit_cast<uint32_t>(kNeg));
  for (bool jit : {false, true}) {
    auto f = ag::function(signed_zero_ops, {.jit_compile = jit});
    EXPECT_EQ(bits(f(a, b)), got) << (jit ? "compiled" : "interpreter");
    if (jit) EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
  }
}

TEST(JitSignedZeros, ReductionsOrderZerosOnEveryBackend) {
  std::vector<float> values;
  for (bool negative_first : {true, false, true})
    for (float v : zeros(negative_first)) values.push_back(v);
  const ag::Tensor m = ag::constant(values, ag::Shape{3, 40});
  const ag::Tensor eager = signed_zero_reductions(m);
  const std::vector<uint32_t> got = bits(eager);
  // reduce_max over rows (3), reduce_min over rows (3), then over columns (40 each).
  for (size_t i = 0; i < got.size(); ++i) {
    const bool is_max = i < 3 || (i >= 6 && i < 46);
    EXPECT_EQ(got[i], std::bit_cast<uint32_t>(is_max ? kPos : kNeg)) << "element " << i << " of " << eager.str();
  }
  for (bool jit : {false, true}) {
    auto f = ag::function(signed_zero_reductions, {.jit_compile = jit});
    EXPECT_EQ(bits(f(m)), got) << (jit ? "compiled" : "interpreter");
    if (jit) EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
  }
}

TEST(JitSignedZeros, FloatRowExtremesRunOnOrderedKeysInEveryProgram) {
  // A small program (outer loops unrolled) still reduces a float row max/min in a register on
  // ordered integer keys: IEEE's maximum in memory was a serial chain of five instructions per
  // element (a softmax's row max 14x slower). Values as eager's, NaN and signed zeros included.
  auto softmax_rows = [](ag::Tensor x) { return ag::stack({ag::reduce_max(x, {1}), ag::reduce_min(x, {1})}); };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(4 * 37, 1.5f);
  v[3] = nan, v[40] = kNeg, v[41] = kPos, v[80] = -7.0f, v[120] = 9.0f, v[147] = nan;
  const ag::Tensor x = ag::constant(v, ag::Shape{4, 37});
  agtest::expect_three_way("row extremes", softmax_rows, {}, x);
  auto f = ag::function(softmax_rows);
  const std::string ir = f.get_concrete_function(x).llvm_ir(false);
  EXPECT_FALSE(agtest::ir_calls(ir, "llvm.maximum")) << ir;
  EXPECT_FALSE(agtest::ir_calls(ir, "llvm.minimum")) << ir;
  EXPECT_NE(ir.find("@llvm.smax"), std::string::npos) << ir;
}

TEST(JitSignedZeros, AnExtremeOfOneSignedZeroKeepsItsSign) {
  // reduce_max of only -0 is -0, reduce_min of only +0 is +0 (the fix-up pass must not flip them).
  const ag::Tensor neg = ag::constant(std::vector<float>(40, kNeg)), pos = ag::constant(std::vector<float>(40, kPos));
  auto extremes = [](ag::Tensor n, ag::Tensor p) { return ag::stack({ag::reduce_max(n), ag::reduce_min(p)}); };
  const std::vector<uint32_t> want = {std::bit_cast<uint32_t>(kNeg), std::bit_cast<uint32_t>(kPos)};
  EXPECT_EQ(bits(extremes(neg, pos)), want);
  for (bool jit : {false, true}) {
    auto f = ag::function(extremes, {.jit_compile = jit});
    EXPECT_EQ(bits(f(neg, pos)), want) << (jit ? "compiled" : "interpreter");
  }
}

}  // namespace
