// Container arguments through the JIT: each element of a std::vector/std::array of tensors is
// an ordinary graph parameter, so eager == interpreter == JIT, with static and run-time shapes.
#include <array>

#include "jit_test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;

// A model's weights as a vector: [w0, b0, w1, b1, ...], one dense layer per pair.
Tensor mlp(Tensor x, const std::vector<Tensor>& weights) {
  Tensor h = x;
  for (size_t k = 0; k + 1 < weights.size(); k += 2) {
    h = ag::matmul(h, weights[k]) + weights[k + 1];
    if (k + 2 < weights.size()) h = ag::tanh(h);
  }
  return h;
}

std::vector<Tensor> mlp_weights(std::initializer_list<int64_t> sizes, uint64_t seed) {
  std::vector<Tensor> ws;
  const std::vector<int64_t> s(sizes);
  for (size_t k = 0; k + 1 < s.size(); ++k) {
    ws.push_back(ag::random_normal({s[k], s[k + 1]}, ag::float32, 0, 0.5, seed + k));
    ws.push_back(ag::random_uniform({s[k + 1]}, ag::float32, -1, 1, seed + 100 + k));
  }
  return ws;
}

TEST(JitContainerArgs, MlpWithAVectorOfWeights) {
  const Tensor x = ag::random_uniform({5, 4}, ag::float32, -1, 1, 3);
  const auto stats = agtest::expect_three_way("mlp 4-8-3", mlp, {}, x, mlp_weights({4, 8, 3}, 11));
  EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
  agtest::expect_three_way("mlp 4-16-16-2", mlp, {}, x, mlp_weights({4, 16, 16, 2}, 21));
}

TEST(JitContainerArgs, OneCompiledFunctionPerLengthAndRunTimeShapesFromSpecs) {
  auto jit = ag::function(mlp);
  auto interp = ag::function(mlp, {.jit_compile = false});
  const std::vector<TensorSpec> specs = {TensorSpec({4, -1}, ag::float32), TensorSpec({-1}, ag::float32),
                                         TensorSpec({-1, 2}, ag::float32), TensorSpec({2}, ag::float32)};
  const auto c = jit.get_concrete_function(TensorSpec({-1, 4}, ag::float32), specs);
  for (int64_t hidden : {3, 8, 33}) {
    const Tensor x = ag::random_uniform({hidden % 5 + 1, 4}, ag::float32, -1, 1, static_cast<uint64_t>(hidden));
    const auto ws = mlp_weights({4, hidden, 2}, static_cast<uint64_t>(hidden));
    EXPECT_TRUE(agtest::same_tensor(mlp(x, ws), c(x, ws))) << "hidden " << hidden;
    EXPECT_TRUE(agtest::same_tensor(interp(x, ws), jit(x, ws))) << "hidden " << hidden;
  }
  EXPECT_EQ(jit.tracing_count(), 1);  // every call fits the concrete function's specs
  EXPECT_FALSE(c.llvm_ir().empty());
}

TEST(JitContainerArgs, ArraysAndVectorsOfNumbersInAStagedLoop) {
  // Horner's rule with plain coefficients (unrolled while tracing) inside a staged loop whose
  // bound and state come from a std::array of tensors.
  auto fn = [](std::array<Tensor, 2> x_and_n, std::vector<double> coeffs) {
    Tensor x = x_and_n[0];
    Tensor i = 0;
    ag::while_stmt([&] { return i < x_and_n[1]; },
                   [&] {
                     Tensor p = ag::zeros_like(x);
                     for (double c : coeffs) p = p * x + c;
                     x = ag::tanh(p);
                     i += 1;
                   },
                   ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("container_args_test.cpp", 70));
    return x;
  };
  const Tensor x = ag::random_uniform({64}, ag::float64, -1, 1, 5);
  agtest::expect_three_way("horner loop", fn, {}, std::array<Tensor, 2>{x, Tensor(4)}, std::vector<double>{0.5, -1.0, 2.0});
  agtest::expect_three_way("horner loop, other coefficients", fn, {}, std::array<Tensor, 2>{x, Tensor(3)},
                           std::vector<double>{1.0, 0.25});
}

TEST(JitContainerArgs, NestedFunctionWithAVectorIsInlinedIntoCompiledCode) {
  auto inner = ag::function(mlp);
  auto outer = [&](Tensor x, std::array<Tensor, 2> layer) { return inner(x, {layer[0], layer[1]}) * 2.f; };
  const Tensor x = ag::random_uniform({3, 4}, ag::float32, -1, 1, 8);
  const auto ws = mlp_weights({4, 6}, 9);
  const std::array<Tensor, 2> layer = {ws[0], ws[1]};
  ag::run_functions_eagerly(true);
  Tensor eager;
  try {
    eager = ag::function(outer)(x, layer);
  } catch (...) {
    ag::run_functions_eagerly(false);
    throw;
  }
  ag::run_functions_eagerly(false);
  auto jit = ag::function(outer);
  EXPECT_TRUE(agtest::same_tensor(eager, jit(x, layer)));
  EXPECT_TRUE(agtest::same_tensor(eager, ag::function(outer, {.jit_compile = false})(x, layer)));
  EXPECT_EQ(inner.tracing_count(), 1);  // traced once, for the outer trace(s), and inlined
  EXPECT_EQ(inner.stats().compiles + inner.stats().disk_hits, 0);
}

}  // namespace
