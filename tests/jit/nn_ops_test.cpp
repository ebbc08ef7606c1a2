// ag::nn and the array functions written in ops, staged: eager == interpreter == JIT, their
// gradients under a tape inside a compiled Function, and the sparse cross entropy's label check
// raising from compiled code.
#include "jit_test_util.h"

namespace {

using ag::Tensor;

Tensor logits_f32() {
  return ag::constant(std::vector<float>{1, 2, 3, 4, -1000, 0, 1000, 999, 0.5f, 0.5f, 0.5f, 0.5f, -3, 7, 2, 2}, {4, 4});
}

TEST(JitNn, ThreeWay) {
  const Tensor x = logits_f32();
  auto nn_outputs = [](Tensor x) {
    auto [mean, variance] = ag::nn::moments(x, {0});
    return std::tuple{ag::nn::softmax(x),
                      ag::nn::log_softmax(x, 0),
                      ag::reduce_logsumexp(x, 1),
                      ag::nn::gelu(x / 500),
                      ag::nn::gelu(x / 500, true),
                      ag::nn::bias_add(x, mean),
                      variance,
                      ag::nn::l2_normalize(x, 1),
                      ag::nn::softmax_cross_entropy_with_logits(ag::nn::softmax(x / 3), x),
                      ag::nn::sparse_softmax_cross_entropy_with_logits(ag::constant(std::vector<int64_t>{3, 0, 1, 2}), x),
                      ag::nn::sigmoid_cross_entropy_with_logits(ag::sigmoid(x / 100), x)};
  };
  const ag::FunctionStats s = agtest::expect_three_way("nn", nn_outputs, {}, x);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
  auto array_outputs = [](Tensor x) {
    return std::tuple{ag::clip_by_value(x, -2.0f, 3.5f), ag::broadcast_to(ag::reduce_sum(x, 0), {3, 4}),
                      ag::one_hot(ag::argmax(x, 1), 4), ag::linspace(ag::reduce_min(x), ag::reduce_max(x), 6),
                      ag::atan2(x, ag::transpose(x)), ag::pad(x, {{1, 2}, {0, 1}}, ag::PadMode::constant, 3),
                      ag::pad(x, {{1, 1}, {2, 3}}, ag::PadMode::symmetric), ag::tile(x, {2, 3}), ag::roll(x, {1, -2}, {0, 1}) * x,
                      ag::meshgrid({x(0), x(1, ag::Slice{0, 3})}, ag::MeshIndexing::ij)[1], ag::norm(x / 1000, 2, 1),
                      ag::gather_nd(x, ag::constant(std::vector<int64_t>{3, 1, 0, 2, 3, 1}, {3, 2}))};
  };
  const ag::FunctionStats a = agtest::expect_three_way("array functions", array_outputs, {}, x);
  EXPECT_EQ(a.compiles + a.disk_hits, 1);
}

// A training step's loss and its gradient: a tape inside the compiled Function, against the
// same step run eagerly.
TEST(JitNn, GradientsUnderATapeInsideAFunction) {
  auto step = [](Tensor w, Tensor x) {
    ag::GradientTape tape;
    tape.watch(w);
    const Tensor h = ag::nn::gelu(ag::matmul(x, w));
    const Tensor z = ag::nn::l2_normalize(h, 1) * 4;
    auto [mean, variance] = ag::nn::moments(z, {0});
    const Tensor loss = ag::reduce_mean(ag::nn::sparse_softmax_cross_entropy_with_logits(
                            ag::constant(std::vector<int32_t>{1, 0, 2}), ag::nn::bias_add(z, mean))) +
                        ag::reduce_sum(variance) * 0.1 + ag::reduce_logsumexp(z) * 0.01;
    return std::tuple{loss, tape.gradient(loss, w)};
  };
  const Tensor w = ag::constant(std::vector<double>{0.3, -0.2, 0.5, 0.1, 0.4, -0.6}, {2, 3});
  const Tensor x = ag::constant(std::vector<double>{1, 2, -1, 0.5, 0.3, -2}, {3, 2});
  const ag::FunctionStats s = agtest::expect_three_way("train step", step, {}, w, x);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

// The label check is an op: compiled code raises InvalidArgumentError and returns nothing.
TEST(JitNn, SparseCrossEntropyRejectsALabelOutOfRange) {
  auto loss = [](Tensor labels, Tensor logits) {
    return ag::nn::sparse_softmax_cross_entropy_with_logits(labels, logits);
  };
  auto f = ag::function(loss, {.jit_compile = true});
  const Tensor logits = logits_f32();
  EXPECT_NO_THROW(f(ag::constant(std::vector<int32_t>{0, 1, 2, 3}), logits));
  try {
    f(ag::constant(std::vector<int32_t>{0, 1, 4, 3}), logits);
    ADD_FAILURE() << "no error";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("every label must be in [0, classes)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nn_ops_test.cpp:"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

}  // namespace
