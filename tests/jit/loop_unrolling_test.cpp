// Which loops are unrolled is agc's decision (codegen_control.cpp, optimizer.cpp): a short
// innermost loop of constant count carries llvm.loop.unroll.full and is unrolled whole; LLVM's
// unrollers leave every other loop as it is (their partial and outer unrolling was half of a
// transformer block's compile time). Checked in the IR, with values three-way.
#include "jit_test_util.h"

namespace {

using ag::Tensor;

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The nearest of k centroids to each point: an argmin over a row of k distances.
Tensor nearest(Tensor x) { return ag::argmin(x * x + 1.0f, 1); }

TEST(JitLoopUnrolling, AShortInnermostLoopIsUnrolledWhole) {
  // Rows of 7: no whole vector at any level (rows of 8 are two SSE vectors or one AVX2 one, which
  // an arg-reduction takes in vector registers instead: arg_row_reductions_test.cpp).
  const Tensor x = ag::random_uniform({300, 7}, ag::float32, -2, 2, 3);
  agtest::expect_three_way("argmin over 7", nearest, {}, x);
  auto f = ag::function(nearest);
  const auto& cf = f.get_concrete_function(x);
  EXPECT_NE(cf.llvm_ir(false).find("llvm.loop.unroll.full"), std::string::npos) << cf.llvm_ir(false);
  // Unrolled: the six comparisons after the first element are straight-line code.
  EXPECT_GE(count(cf.llvm_ir(true), "fcmp olt"), 6u) << cf.llvm_ir(true);
}

TEST(JitLoopUnrolling, LongerLoopsStayLoops) {
  const Tensor x = ag::random_uniform({4, 100}, ag::float32, -2, 2, 4);
  agtest::expect_three_way("argmin over 100", nearest, {}, x);
  auto f = ag::function(nearest);
  const auto& cf = f.get_concrete_function(x);
  EXPECT_EQ(cf.llvm_ir(false).find("llvm.loop.unroll.full"), std::string::npos);
  // Neither fully nor partially unrolled by LLVM: one comparison in the loop.
  EXPECT_LE(count(cf.llvm_ir(true), "fcmp olt"), 2u) << cf.llvm_ir(true);
}

}  // namespace
