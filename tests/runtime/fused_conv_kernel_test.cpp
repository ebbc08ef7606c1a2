// FusedConv2D's kernel (window_kernel.cpp, ops/isa/conv_epilogue.cpp) on the interpreter: a
// Function's conv2d + bias_add + relu, and either epilogue alone, give eager's bits in both
// dtypes. ctest runs these again at every kernel level (runtime.kernels_*), so the epilogue's
// vector code is checked at each: bias and relu in float64 (agc's loops), relu after oneDNN in
// float32. Also a convolution over no input channels, whose fused result is relu(bias).
#include <gtest/gtest.h>
#include <ag/ag.h>

#include <functional>
#include <string>
#include <vector>

namespace {

using ag::Tensor;

int fused_nodes(const ag::Graph& g) {
  int n = 0;
  for (const ag::Node& node : g.nodes) n += node.op == ag::OpKind::FusedConv2D;
  return n;
}

TEST(FusedConvKernel, InterpretedLayersGiveEagersBitsInBothDtypes) {
  using Layer = std::function<Tensor(Tensor, Tensor, Tensor)>;
  const std::vector<std::pair<const char*, Layer>> layers = {
      {"bias and relu", [](Tensor x, Tensor w, Tensor b) { return ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, 1, "SAME"), b)); }},
      {"bias", [](Tensor x, Tensor w, Tensor b) { return ag::nn::bias_add(ag::nn::conv2d(x, w, 2, "VALID"), b); }},
      {"relu", [](Tensor x, Tensor w, Tensor) { return ag::relu(ag::nn::conv2d(x, w, 1, "SAME")); }},
  };
  for (ag::DType d : {ag::float32, ag::float64}) {
    const Tensor x = ag::cast(ag::random_uniform({2, 9, 7, 5}, ag::float32, -2, 2, 1), d);
    const Tensor w = ag::cast(ag::random_uniform({3, 3, 5, 19}, ag::float32, -1, 1, 2), d);
    const Tensor b = ag::cast(ag::random_uniform({19}, ag::float32, -1, 1, 3), d);
    for (const auto& [what, layer] : layers) {
      const std::string at = std::string(what) + ", " + std::string(ag::dtype_name(d));
      auto f = ag::function(layer, {.jit_compile = false});
      EXPECT_EQ(f(x, w, b).to_vector<double>(), layer(x, w, b).to_vector<double>()) << at;
      EXPECT_EQ(fused_nodes(f.get_concrete_function(x, w, b).graph()), 1) << at;
    }
  }
}

TEST(FusedConvKernel, NoInputChannelsGiveTheEpilogueOfZeros) {
  auto layer = [](Tensor x, Tensor w, Tensor b) { return ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, 1, "SAME"), b)); };
  auto f = ag::function(layer, {.jit_compile = false});
  const Tensor x = ag::zeros({1, 4, 4, 0}), w = ag::zeros({3, 3, 0, 3}), b = ag::constant(std::vector<float>{-1.5f, 0.f, 2.5f});
  const std::vector<float> got = f(x, w, b).to_vector<float>();
  ASSERT_EQ(got.size(), 48u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i % 3 == 2 ? 2.5f : 0.f) << "element " << i;
  EXPECT_EQ(got, layer(x, w, b).to_vector<float>());
  EXPECT_EQ(fused_nodes(f.get_concrete_function(x, w, b).graph()), 1);
}

}  // namespace
