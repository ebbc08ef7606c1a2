// Struct parameters and results through the JIT: a struct's tensor fields are ordinary graph
// parameters, so eager == interpreter == JIT; ag::grad with respect to a struct returns the
// struct, computed by compiled code, equal to the eager tape's per-field gradients; a training
// loop that updates the struct with ag::tree_map.
#include <array>

#include "jit_test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;

struct Layer {
  Tensor w, b;
};
struct Params {
  Layer hidden;
  Layer out;
};

Params init_params(int64_t in, int64_t h, int64_t out, uint64_t seed) {
  return {{ag::random_normal({in, h}, ag::float32, 0, 0.5, seed), ag::random_uniform({h}, ag::float32, -0.1, 0.1, seed + 1)},
          {ag::random_normal({h, out}, ag::float32, 0, 0.5, seed + 2), ag::zeros({out})}};
}

Tensor predict(const Params& p, Tensor x) {
  return ag::matmul(ag::tanh(ag::matmul(x, p.hidden.w) + p.hidden.b), p.out.w) + p.out.b;
}

Tensor loss(const Params& p, Tensor x, Tensor y) { return ag::reduce_mean(ag::square(predict(p, x) - y)); }

// Staged control flow on a struct's fields, and a struct result.
struct Stats {
  Tensor total;
  std::array<Tensor, 2> extremes;
};
Stats summarize(const Layer& l, Tensor limit) {
  Tensor total = ag::reduce_sum(l.w) + ag::reduce_sum(l.b);
  Tensor steps = 0.f;
  ag::while_stmt([&] { return total < limit; }, [&] { total = total * 2.f + 1.f; steps += 1.f; },
                 ag::state(total, steps), {"total", "steps"}, AG_SOURCE_LOC("struct_args_test.cpp", 43));
  return {total + steps, {ag::reduce_min(l.w), ag::reduce_max(l.w)}};
}

TEST(JitStructArgs, ForwardAgreesOnEveryBackendWithOneCompile) {
  const Params p = init_params(4, 8, 3, 7);
  const Tensor x = ag::random_uniform({6, 4}, ag::float32, -1, 1, 3);
  const auto stats = agtest::expect_three_way("mlp with a struct of weights", predict, {1e-5, 1e-6}, p, x);
  EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
  EXPECT_EQ(stats.traces, 1);
}

TEST(JitStructArgs, StructResultsAndStagedLoopsOverFields) {
  const Layer l{ag::constant({{0.5f, -0.25f}, {1.f, 0.f}}), ag::constant({0.125f, 0.125f})};
  for (float limit : {0.f, 10.f, 1000.f}) {
    const auto stats = agtest::expect_three_way("summarize", summarize, {}, l, Tensor(limit));
    EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
  }
}

TEST(JitStructArgs, GradWithRespectToAStructReturnsTheStruct) {
  const Params p = init_params(3, 5, 2, 11);
  const Tensor x = ag::random_uniform({7, 3}, ag::float32, -1, 1, 12);
  const Tensor y = ag::random_uniform({7, 2}, ag::float32, -1, 1, 13);
  // The eager reference: a tape over the four tensors.
  ag::GradientTape tape;
  for (const Tensor& t : ag::tree_leaves(p)) tape.watch(t);
  const Tensor value = loss(p, x, y);
  const std::vector<Tensor> expected = tape.gradient(value, {p.hidden.w, p.hidden.b, p.out.w, p.out.b});

  auto grad = ag::grad(loss);
  auto grad_interp = ag::grad(loss, {.jit_compile = false});
  const Params g = grad(p, x, y);
  const Params gi = grad_interp(p, x, y);
  const std::vector<Tensor> got = ag::tree_leaves(g), got_interp = ag::tree_leaves(gi);
  ASSERT_EQ(got.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_TRUE(agtest::same_tensor(expected[k], got[k], {1e-4, 1e-6})) << "field " << k << " [jit]";
    EXPECT_TRUE(agtest::same_tensor(expected[k], got_interp[k], {1e-4, 1e-6})) << "field " << k << " [interpreter]";
  }
  EXPECT_EQ(grad.stats().compiles + grad.stats().disk_hits, 1);
  // The gradient's signature names the fields.
  const std::string sig = grad.pretty_printed_concrete_signatures();
  EXPECT_NE(sig.find(".hidden.w: TensorSpec(shape=(3, 5)"), std::string::npos) << sig;

  auto vg = ag::value_and_grad(loss);
  const auto [v, g2] = vg(p, x, y);
  EXPECT_TRUE(agtest::same_tensor(value, v, {1e-5, 1e-6}));
  EXPECT_TRUE(agtest::same_tensor(expected[3], g2.out.b, {1e-4, 1e-6}));
}

TEST(JitStructArgs, ATrainingLoopUpdatesTheStructWithTreeMap) {
  const Tensor x = ag::random_uniform({32, 2}, ag::float32, -1, 1, 21);
  const Tensor y = ag::reduce_sum(x * x, {1}, /*keepdims=*/true);  // learn x0^2 + x1^2
  auto step = ag::function([](const Params& p, Tensor x, Tensor y) {
    ag::GradientTape tape;
    for (const Tensor& t : ag::tree_leaves(p)) tape.watch(t);
    const Tensor l = loss(p, x, y);
    const std::vector<Tensor> leaves = ag::tree_leaves(p);
    const std::vector<Tensor> g = tape.gradient(l, std::vector<ag::GradSource>(leaves.begin(), leaves.end()));
    const Params grads = ag::tree_unflatten(p, g);
    return std::tuple{l, ag::tree_map([](Tensor w, Tensor dw) { return w - 0.2f * dw; }, p, grads)};
  });
  Params p = init_params(2, 16, 1, 5);
  const float first = loss(p, x, y).item<float>();
  for (int i = 0; i < 200; ++i) p = std::get<1>(step(p, x, y));
  const float last = loss(p, x, y).item<float>();
  EXPECT_LT(last, first * 0.2f) << first << " -> " << last;
  EXPECT_EQ(step.tracing_count(), 1);
  EXPECT_EQ(step.stats().compiles + step.stats().disk_hits, 1);
}

}  // namespace
