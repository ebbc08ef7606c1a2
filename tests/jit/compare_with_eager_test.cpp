// ag::debugging::compare_with_eager and AG_CHECK=eager against a deliberate bug (the JIT's test
// hook AG_JIT_TEST_MISCOMPILE adds 1 to one op's values): the first value that differs is the
// miscompiled op, with its line, element and both values, not the results downstream; correct
// code agrees on every value; a train step's Variables are updated once, not twice. And the
// cost and memory analyses of a concrete function.
#include "ag/detail/call_hooks.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

int g_tanh_line = 0;
Tensor layer(Tensor x, Tensor w) {
  const Tensor h = ag::matmul(x, w);
  g_tanh_line = __LINE__ + 1;
  const Tensor a = ag::tanh(h);
  return a * 2.f + ag::reduce_mean(a);
}

TEST(CompareWithEager, CorrectCodeAgreesOnEveryValue) {
  auto f = ag::function(layer);
  const Tensor x = ag::random_uniform({4, 8}, ag::float32, -1, 1, 1), w = ag::random_uniform({8, 16}, ag::float32, -1, 1, 2);
  const ag::debugging::EagerComparison r = ag::debugging::compare_with_eager(f, x, w);
  EXPECT_TRUE(r.equal()) << r.str();
  EXPECT_GE(r.values_compared, 5);  // matmul, tanh, mul, mean, add, the result
  EXPECT_NE(r.str().find("agrees with the eager kernels on"), std::string::npos);
}

TEST(CompareWithEager, FindsTheMiscompiledNodeNotItsConsumers) {
  const agtest::ScopedEnv bug("AG_JIT_TEST_MISCOMPILE", "Tanh");
  auto f = ag::function(layer);
  const Tensor x = ag::constant({{0.f, 0.f}, {0.f, 0.f}}), w = ag::constant({{1.f, 2.f}, {3.f, 4.f}});
  const ag::debugging::EagerComparison r = ag::debugging::compare_with_eager(f, x, w);
  ASSERT_FALSE(r.equal());
  const ag::debugging::NodeDifference& d = *r.first_difference;
  EXPECT_EQ(d.op, "ag::tanh");
  EXPECT_EQ(d.element, 0);
  EXPECT_EQ(d.eager, "[[0 0] [0 0]]");
  EXPECT_EQ(d.compiled, "[[1 1] [1 1]]");
  EXPECT_EQ(d.loc.line, static_cast<uint32_t>(g_tanh_line));
  EXPECT_NE(r.str().find("compare_with_eager: ag::tanh (%"), std::string::npos) << r.str();
  EXPECT_NE(r.str().find("(at compare_with_eager_test.cpp:" + std::to_string(g_tanh_line) + ")"), std::string::npos) << r.str();
}

TEST(CompareWithEager, CheckEagerOnEveryCallRaisesAnInternalError) {
  const agtest::ScopedEnv bug("AG_JIT_TEST_MISCOMPILE", "Tanh");
  auto f = ag::function(layer);
  const Tensor x = ag::constant({{0.5f, 0.f}}), w = ag::constant({{1.f, 2.f}, {3.f, 4.f}});
  ag::detail::set_call_hook(ag::detail::CallHook::CheckEager, true);
  try {
    f(x, w);
    ADD_FAILURE() << "no error";
  } catch (const ag::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("compare_with_eager: ag::tanh"), std::string::npos) << e.what();
  }
  ag::detail::set_call_hook(ag::detail::CallHook::CheckEager, false);
}

TEST(CompareWithEager, CheckEagerPassesCorrectCodeAndReturnsItsResults) {
  auto f = ag::function(layer);
  const Tensor x = ag::random_uniform({3, 8}, ag::float32, -1, 1, 3), w = ag::random_uniform({8, 5}, ag::float32, -1, 1, 4);
  ag::detail::set_call_hook(ag::detail::CallHook::CheckEager, true);
  const Tensor checked = f(x, w);
  ag::detail::set_call_hook(ag::detail::CallHook::CheckEager, false);
  agtest::expect_same(layer(x, w), checked, {}, "AG_CHECK=eager");
}

TEST(CompareWithEager, VariablesAreUpdatedOnce) {
  ag::Variable w(ag::constant({1.f, 2.f}), "w");
  auto step = ag::function([&](Tensor g) {
    w.assign_sub(g * 0.5f);
    return w.read_value() * 2.f;
  });
  const ag::debugging::EagerComparison r = ag::debugging::compare_with_eager(step, ag::constant({2.f, 2.f}));
  EXPECT_TRUE(r.equal()) << r.str();
  EXPECT_EQ(w.value().to_vector<float>(), (std::vector<float>{0.f, 1.f}));  // one step, not two
}

TEST(CostAnalysis, FlopsAndBytesPerNode) {
  auto f = ag::function(layer);
  const auto cf = f.get_concrete_function(ag::TensorSpec({4, 8}, ag::float32), ag::TensorSpec({8, 16}, ag::float32));
  const ag::CostAnalysis c = cf.cost_analysis();
  auto node = [&](const std::string& op) {
    for (const ag::NodeCost& n : c.nodes)
      if (n.op == op) return n;
    ADD_FAILURE() << "no " << op << " in " << c.str(100);
    return ag::NodeCost{};
  };
  EXPECT_EQ(node("ag::matmul").flops, 2.0 * 4 * 16 * 8);
  EXPECT_EQ(node("ag::matmul").bytes_read, (4 * 8 + 8 * 16) * 4.0);
  EXPECT_EQ(node("ag::matmul").bytes_written, 4 * 16 * 4.0);
  EXPECT_EQ(node("ag::tanh").transcendentals, 64);
  EXPECT_EQ(node("ag::tanh").loc.line, static_cast<uint32_t>(g_tanh_line));
  EXPECT_GE(c.flops, 2.0 * 4 * 16 * 8 + 3 * 64);
  EXPECT_FALSE(c.loop_bodies_counted_once);
  EXPECT_NE(c.str().find("ag::matmul"), std::string::npos) << c.str();

  const ag::MemoryAnalysis m = cf.memory_analysis();
  EXPECT_EQ(m.argument_bytes, (4 * 8 + 8 * 16) * 4);
  EXPECT_EQ(m.output_bytes, 4 * 16 * 4);
  EXPECT_GE(m.temp_bytes, 0) << m.str();  // planned by the JIT
}

}  // namespace
