// Convolutions and pooling staged: eager == interpreter == JIT in both dtypes (float32 on
// oneDNN from compiled code too, which the call counter shows), shapes known only at run time
// (the result's dims from the runtime, a channel mismatch as InvalidArgumentError), and a small
// CNN's training step with its tape inside the compiled Function, nested in another Function.
#include "ag/detail/runtime_kernels.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::sample;
using agtest::Values;

auto window_outputs = [](Tensor x, Tensor w, Tensor wt) {
  return std::tuple{ag::nn::conv2d(x, w, 1, "SAME"),
                    ag::nn::conv2d(x, w, {2, 1}, "VALID", {1, 2}),
                    ag::nn::conv2d_transpose(x, wt, {2, 14, 12, 4}, 2, "SAME"),
                    ag::nn::conv1d(ag::reshape(x, {2, 42, 3}), ag::reshape(ag::slice(w, {0, 0, 0, 0}, {1, 3, 3, 5}), {3, 3, 5}), 2,
                                   "VALID"),
                    ag::nn::max_pool2d(x, 2, 2, "VALID"),
                    ag::nn::avg_pool2d(ag::relu(x), {3, 2}, 1, "SAME"),
                    ag::nn::max_pool2d(ag::nn::conv2d(x, w, 1, "SAME") * 2 + 1, 3, 2, "SAME")};
};

TEST(JitWindowOps, ThreeWayInBothDtypes) {
  for (ag::DType d : {ag::float32, ag::float64}) {
    SCOPED_TRACE(ag::dtype_name(d));
    const Tensor x = sample(d, {2, 7, 6, 3}, 1, Values::Moderate), w = sample(d, {3, 3, 3, 5}, 2, Values::Moderate);
    const Tensor wt = sample(d, {3, 3, 4, 3}, 3, Values::Moderate);
    const uint64_t before = ag::detail::onednn_conv_calls();
    auto jit = ag::function(window_outputs);
    const auto eager = window_outputs(x, w, wt);
    const uint64_t eager_calls = ag::detail::onednn_conv_calls() - before;
    agtest::expect_same(eager, jit(x, w, wt), {.rtol = 1e-4, .atol = 1e-5}, "jit");
    const uint64_t jit_calls = ag::detail::onednn_conv_calls() - before - eager_calls;
    // Five convolutions eagerly, four compiled (the two identical SAME ones are one node after
    // CSE); float32 ones run on oneDNN whether eager or compiled.
    EXPECT_EQ(eager_calls, d == ag::float32 ? 5u : 0u);
    EXPECT_EQ(jit_calls, d == ag::float32 ? 4u : 0u);
    EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
    agtest::expect_three_way("window ops", window_outputs, {.rtol = 1e-4, .atol = 1e-5}, x, w, wt);
  }
}

// A signature with unknown dims: the runtime gives the result's dims; shapes that disagree at
// run time are an InvalidArgumentError naming the op and the line, never a crash.
TEST(JitWindowOps, DimsKnownOnlyAtRunTime) {
  const ag::FunctionOptions opts{.input_signature = {TensorSpec({-1, -1, -1, -1}, ag::float32), TensorSpec({3, 3, -1, 4}, ag::float32)}};
  auto net = [](Tensor x, Tensor w) {
    const Tensor y = ag::nn::conv2d(x, w, 2, "SAME");
    return std::tuple{y, ag::nn::avg_pool2d(y, 2, 1, "VALID"), ag::nn::conv2d_transpose(y, w, {1, 9, 8, 2}, 2, "SAME")};
  };
  auto jit = ag::function(net, opts);
  for (const ag::Shape& s : {ag::Shape{1, 9, 8, 2}}) {
    const Tensor x = sample(ag::float32, s, 4, Values::Moderate), w = sample(ag::float32, {3, 3, 2, 4}, 5, Values::Moderate);
    agtest::expect_same(net(x, w), jit(x, w), {.rtol = 1e-4, .atol = 1e-5}, s.str());
  }
  auto conv = [](Tensor x, Tensor w) { return ag::nn::max_pool2d(ag::nn::conv2d(x, w, 1, "VALID"), 2, 2, "VALID"); };
  auto jit_conv = ag::function(conv, opts);
  for (const ag::Shape& s : {ag::Shape{2, 5, 6, 3}, ag::Shape{1, 12, 4, 3}, ag::Shape{3, 4, 4, 3}}) {
    const Tensor x = sample(ag::float32, s, 6, Values::Moderate), w = sample(ag::float32, {3, 3, 3, 4}, 7, Values::Moderate);
    agtest::expect_same(conv(x, w), jit_conv(x, w), {.rtol = 1e-4, .atol = 1e-5}, s.str());
  }
  EXPECT_EQ(jit_conv.stats().traces, 1);
  const Tensor w = sample(ag::float32, {3, 3, 3, 4}, 8, Values::Moderate);
  agtest::expect_invalid_argument(jit_conv, {"ag::nn::conv2d", "input channels of the input and the filter differ: 2 vs 3",
                                             "window_ops_test.cpp:"},
                                  ag::ones({1, 5, 5, 2}, ag::float32), w);
  agtest::expect_invalid_argument(jit_conv, {"ag::nn::conv2d", "does not fit the input's 2x5 with VALID padding"},
                                  ag::ones({1, 2, 5, 3}, ag::float32), w);
}

// A small CNN's training step: conv, pool, conv, dense, cross entropy, its gradients by a tape
// inside the Function, and SGD on Variables; nested in an outer Function that runs two steps.
TEST(JitWindowOps, CnnTrainingStepUnderATapeInsideNestedFunctions) {
  auto run = [](bool compiled) {
    ag::Variable k1(sample(ag::float32, {3, 3, 1, 4}, 11, Values::Moderate) * 0.3f, "k1");
    ag::Variable k2(sample(ag::float32, {3, 3, 4, 6}, 12, Values::Moderate) * 0.2f, "k2");
    ag::Variable dense(sample(ag::float32, {24, 3}, 13, Values::Moderate) * 0.2f, "dense");
    auto step = ag::function(
        [&](Tensor images, Tensor labels) {
          ag::GradientTape tape;
          Tensor h = ag::relu(ag::nn::conv2d(images, k1.value(), 1, "SAME"));
          h = ag::nn::max_pool2d(h, 2, 2, "VALID");
          h = ag::nn::avg_pool2d(ag::tanh(ag::nn::conv2d(h, k2.value(), 1, "VALID")), 2, 1, "SAME");
          const Tensor logits = ag::matmul(ag::reshape(h, {-1, 24}), dense.value());
          const Tensor loss = ag::reduce_mean(ag::nn::sparse_softmax_cross_entropy_with_logits(labels, logits));
          const std::vector<Tensor> g = tape.gradient(loss, std::vector<ag::GradSource>{k1, k2, dense});
          k1.assign_sub(g[0] * 0.5f);
          k2.assign_sub(g[1] * 0.5f);
          dense.assign_sub(g[2] * 0.5f);
          return loss;
        },
        {.jit_compile = compiled});
    auto two_steps = ag::function([&](Tensor images, Tensor labels) { return step(images, labels) + step(images, labels); },
                                  {.jit_compile = compiled});
    const Tensor images = sample(ag::float32, {3, 8, 8, 1}, 14, Values::Moderate);
    const Tensor labels = ag::constant(std::vector<int32_t>{0, 2, 1});
    std::vector<Tensor> out{two_steps(images, labels), two_steps(images, labels), k1.value(), k2.value(), dense.value()};
    return out;
  };
  const std::vector<Tensor> interpreted = run(false), compiled = run(true);
  for (size_t i = 0; i < interpreted.size(); ++i)
    EXPECT_TRUE(agtest::same_tensor(interpreted[i], compiled[i], {.rtol = 1e-4, .atol = 1e-5})) << "output " << i;
  // Training lowered the loss.
  EXPECT_LT(compiled[1].item<float>(), compiled[0].item<float>());
}


// Both runtime-kernel families in a staged loop, in a compiled Function differentiated by a tape
// outside its trace: conv2d, sort and a segment sum each iteration, against the same eagerly.
// max_pool2d's second order (MaxPoolGradGrad) compiled: a gradient of a gradient, in float32
// and float64, three-way.
TEST(JitWindowOps, MaxPoolSecondOrderThreeWay) {
  auto hessian_vector = [](Tensor x, Tensor v) {
    ag::GradientTape outer;
    outer.watch(x);
    ag::GradientTape inner;
    inner.watch(x);
    const Tensor y = ag::nn::max_pool2d(x * x, 3, 2, "SAME");
    const Tensor g = inner.gradient(ag::reduce_sum(ag::sin(y)), x);
    return std::make_tuple(g, outer.gradient(ag::reduce_sum(g * v), x));
  };
  for (ag::DType d : {ag::float32, ag::float64}) {
    const Tensor x = sample(d, {2, 5, 6, 3}, 31, Values::Moderate), v = sample(d, {2, 5, 6, 3}, 32, Values::Moderate);
    agtest::expect_three_way("max_pool2d second order", hessian_vector, {.rtol = 1e-5, .atol = 1e-6}, x, v);
  }
}

TEST(JitWindowOps, StagedLoopUnderATapeOutsideTheTrace) {
  auto body = [](Tensor x, Tensor w) {
    auto [i, h] = ag::while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
                                 [&](const Tensor& i, const Tensor& h) {
                                   Tensor next = ag::tanh(ag::nn::conv2d(h, w, 1, "SAME"));
                                   next = ag::sort(next, 2) + ag::reshape(ag::unsorted_segment_sum(
                                                                  ag::reshape(next, {-1, 2}), ag::constant(std::vector<int32_t>(9, 0)), 1), {1, 1, 1, 2});
                                   return std::make_tuple(i + 1, next * 0.5);
                                 },
                                 std::make_tuple(ag::constant(0), x));
    return ag::reduce_sum(h * h);
  };
  const Tensor x = sample(ag::float64, {1, 3, 3, 2}, 21, Values::Moderate), w = sample(ag::float64, {3, 3, 2, 2}, 22, Values::Moderate);
  auto gradients = [&](auto&& f) {
    ag::GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    const Tensor loss = f(x, w);
    const std::vector<Tensor> g = tape.gradient(loss, std::vector<ag::GradSource>{x, w});
    return std::make_tuple(loss, g[0], g[1]);
  };
  const auto eager = gradients(body);
  auto interp = ag::function(body, {.jit_compile = false});
  auto jit = ag::function(body);
  agtest::expect_same(eager, gradients(interp), {.rtol = 1e-9, .atol = 1e-12}, "interpreter");
  agtest::expect_same(eager, gradients(jit), {.rtol = 1e-9, .atol = 1e-12}, "jit");
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
}

}  // namespace
