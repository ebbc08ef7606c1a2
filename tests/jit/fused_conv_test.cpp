// Convolution layers fused (passes/fuse_conv_epilogues.cpp): conv2d + bias_add + relu, either
// of the two alone after a conv2d, is one FusedConv2D in the optimized graph, whose float32 form
// has oneDNN add the bias (the counter shows it ran), and the result is eager's bit for bit, on
// the interpreter and compiled, in both dtypes and several geometries; a NaN stays a NaN; a
// convolution read twice, or a bias that is no per-channel vector, is left alone; and the same in
// a staged loop and under tapes outside and inside the trace.
#include "ag/detail/runtime_kernels.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using agtest::sample;
using agtest::Values;

// Exact: eager adds the bias and takes the relu after the convolution, and so does the fused op.
constexpr agtest::Tol kExact{.rtol = 0, .atol = 0};

// Nodes of op `op` in g and its sub-graphs; and how many of the FusedConv2Ds have relu.
int count_ops(const ag::Graph& g, ag::OpKind op, bool relu_only = false) {
  int n = 0;
  for (const ag::Node& node : g.nodes) {
    n += node.op == op && (!relu_only || node.attrs.fused_relu());
    for (const auto& sub : node.subgraphs) n += count_ops(*sub, op, relu_only);
  }
  return n;
}

struct Layer {
  ag::Shape x, w;
  int stride;
  const char* padding;
};

Tensor conv_layer(Tensor x, Tensor w, Tensor b, int stride, std::string padding) {
  return ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, stride, padding), b));
}

TEST(FusedConvolutions, ConvBiasReluIsOneNodeWithEagersBits) {
  const std::vector<Layer> layers = {
      {{2, 9, 9, 16}, {3, 3, 16, 16}, 1, "SAME"},  // a ResNet stage's 3x3
      {{2, 9, 9, 16}, {3, 3, 16, 32}, 2, "SAME"},  // its strided one
      {{3, 12, 12, 1}, {5, 5, 1, 6}, 1, "VALID"},  // LeNet's first
      {{2, 7, 5, 3}, {1, 1, 3, 5}, 1, "VALID"},    // 1x1, odd channel counts
  };
  for (ag::DType d : {ag::float32, ag::float64}) {
    for (const Layer& l : layers) {
      const std::string what = fmt::format("{} x{} w{} stride {} {}", ag::dtype_name(d), l.x.str(), l.w.str(), l.stride, l.padding);
      const Tensor x = sample(d, l.x, 1, Values::Moderate), w = sample(d, l.w, 2, Values::Moderate) * 0.3;
      const Tensor b = sample(d, {l.w[3]}, 3, Values::Moderate);
      const uint64_t fused_before = ag::detail::onednn_conv_bias_calls();
      agtest::expect_three_way(what, conv_layer, kExact, x, w, b, l.stride, std::string(l.padding));
      // The interpreter's and the JIT's calls (eager has no fused op).
      EXPECT_EQ(ag::detail::onednn_conv_bias_calls() - fused_before, d == ag::float32 ? 2u : 0u) << what;
      auto f = ag::function(conv_layer);
      const ag::Graph& g = f.get_concrete_function(x, w, b, l.stride, std::string(l.padding)).graph();
      EXPECT_EQ(count_ops(g, ag::OpKind::FusedConv2D, /*relu_only=*/true), 1) << what << ag::graph_to_text(g);
      EXPECT_EQ(count_ops(g, ag::OpKind::Conv2D) + count_ops(g, ag::OpKind::Relu) + count_ops(g, ag::OpKind::Add), 0)
          << what << ag::graph_to_text(g);
    }
  }
}

// bias_add alone, relu alone (no bias: oneDNN's plain convolution, then the relu in place), a
// NaN in the input (relu keeps it, as ag::relu does), and what is not fused: a convolution also
// returned, a bias of the whole output's shape, a sum read twice before its relu.
TEST(FusedConvolutions, EitherEpilogueAloneAndWhatIsLeftUnfused) {
  const Tensor x = sample(ag::float32, {2, 8, 8, 4}, 4, Values::Moderate), w = sample(ag::float32, {3, 3, 4, 8}, 5, Values::Moderate);
  const Tensor b = sample(ag::float32, {8}, 6, Values::Moderate), full = sample(ag::float32, {2, 8, 8, 8}, 7, Values::Moderate);
  struct Case {
    const char* what;
    std::function<Tensor(Tensor, Tensor, Tensor, Tensor)> fn;
    int fused, fused_relu, convs;
  };
  const std::vector<Case> cases = {
      {"bias only", [](Tensor x, Tensor w, Tensor b, Tensor) { return ag::nn::bias_add(ag::nn::conv2d(x, w, 1, "SAME"), b); }, 1, 0, 0},
      {"bias first", [](Tensor x, Tensor w, Tensor b, Tensor) { return ag::relu(b + ag::nn::conv2d(x, w, 1, "SAME")); }, 1, 1, 0},
      {"relu only", [](Tensor x, Tensor w, Tensor, Tensor) { return ag::relu(ag::nn::conv2d(x, w, 1, "SAME")); }, 1, 1, 0},
      {"conv also returned",
       [](Tensor x, Tensor w, Tensor b, Tensor) {
         const Tensor y = ag::nn::conv2d(x, w, 1, "SAME");
         return ag::concat({ag::relu(y + b), y}, 3);
       },
       0, 0, 1},
      {"a full-shape addend", [](Tensor x, Tensor w, Tensor, Tensor full) { return ag::relu(ag::nn::conv2d(x, w, 1, "SAME") + full); }, 0, 0, 1},
      {"sum read twice",
       [](Tensor x, Tensor w, Tensor b, Tensor) {
         const Tensor s = ag::nn::conv2d(x, w, 1, "SAME") + b;
         return ag::relu(s) * s;
       },
       1, 0, 0},
  };
  for (const Case& c : cases) {
    agtest::expect_three_way(c.what, c.fn, kExact, x, w, b, full);
    auto f = ag::function(c.fn);
    const ag::Graph& g = f.get_concrete_function(x, w, b, full).graph();
    EXPECT_EQ(count_ops(g, ag::OpKind::FusedConv2D), c.fused) << c.what << "\n" << ag::graph_to_text(g);
    EXPECT_EQ(count_ops(g, ag::OpKind::FusedConv2D, true), c.fused_relu) << c.what << "\n" << ag::graph_to_text(g);
    EXPECT_EQ(count_ops(g, ag::OpKind::Conv2D), c.convs) << c.what << "\n" << ag::graph_to_text(g);
  }
  std::vector<float> with_nan = x.to_vector<float>();
  with_nan[3 * 4 + 1] = std::nanf("");
  const Tensor xn = ag::constant(with_nan, {2, 8, 8, 4});
  auto layer = [](Tensor x, Tensor w, Tensor b) { return ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, 1, "SAME"), b)); };
  agtest::expect_three_way("a NaN in the input", layer, kExact, xn, w, b);
  auto f = ag::function(layer);
  const std::vector<float> y = f(xn, w, b).to_vector<float>();
  EXPECT_GT(std::count_if(y.begin(), y.end(), [](float v) { return std::isnan(v); }), 0) << "relu kept no NaN";
  // Nested: an outer Function calls the compiled layer twice, the second time on its output.
  auto twice = [&](Tensor x, Tensor w, Tensor w2, Tensor b) { return f(f(x, w, b), w2, b); };
  const Tensor w2 = sample(ag::float32, {3, 3, 8, 8}, 11, Values::Moderate) * 0.3f;
  agtest::expect_three_way("nested layers", twice, kExact, x, w, w2, b);
}

// A stack of layers in a staged loop (the fused node inside the While's body), and the gradient
// of a loss through a compiled layer by a tape outside the trace and by one inside: gradients
// are taken of the traced graph, never of the fused one.
TEST(FusedConvolutions, InAStagedLoopAndUnderTapes) {
  const Tensor x = sample(ag::float32, {1, 6, 6, 4}, 8, Values::Moderate), w = sample(ag::float32, {3, 3, 4, 4}, 9, Values::Moderate) * 0.2f;
  const Tensor b = sample(ag::float32, {4}, 10, Values::Moderate) * 0.1f;
  auto stack = [](Tensor x, Tensor w, Tensor b, Tensor layers) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < layers; },
                   [&] {
                     x = ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, 1, "SAME"), b));
                     i += 1;
                   },
                   ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("fused_conv_test.cpp", 1));
    return x;
  };
  agtest::expect_three_way("staged layers", stack, kExact, x, w, b, Tensor(3));
  auto f = ag::function(stack);
  const ag::Graph& g = f.get_concrete_function(x, w, b, Tensor(3)).graph();
  EXPECT_EQ(count_ops(g, ag::OpKind::FusedConv2D, true), 1) << ag::graph_to_text(g);
  EXPECT_EQ(count_ops(g, ag::OpKind::Conv2D), 0) << ag::graph_to_text(g);

  auto loss = [](Tensor x, Tensor w, Tensor b) { return ag::reduce_sum(ag::square(ag::relu(ag::nn::bias_add(ag::nn::conv2d(x, w, 1, "SAME"), b)))); };
  // fn's loss and its gradients for w and b, by a tape around the call.
  auto loss_and_gradients = [](auto&& fn, Tensor x, Tensor w, Tensor b) {
    ag::GradientTape tape;
    tape.watch(w);
    tape.watch(b);
    const Tensor l = fn(x, w, b);
    const std::vector<Tensor> grads = tape.gradient(l, std::vector<ag::GradSource>{w, b});
    return std::make_tuple(l, grads[0], grads[1]);
  };
  auto outside = [&](auto&& fn) { return loss_and_gradients(fn, x, w, b); };
  auto inside = [&](Tensor x, Tensor w, Tensor b) { return loss_and_gradients(loss, x, w, b); };
  // The reductions of the loss and of the bias gradient may sum in another order compiled.
  const agtest::Tol sums{.rtol = 1e-5, .atol = 1e-6};
  auto compiled = ag::function(loss);
  agtest::expect_same(outside(loss), outside(compiled), sums, "a tape outside the trace");
  agtest::expect_three_way("a tape inside the trace", inside, sums, x, w, b);
}

}  // namespace
