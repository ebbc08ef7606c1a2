// A tape recording inside a trace, around a staged while loop: tracing probes the loop's
// condition once in the enclosing frame and rolls the probe back (and traces a loop again when a
// loop variable changes type), so node ids are reused. The tape forgets what it recorded of
// the dropped nodes: before it did, a gradient picked up the probe's ops through the reused ids
// (d/dx of the condition's sum(y*y) added 4x to every element, with no error).
#include "jit_test_util.h"

namespace {

using ag::Tensor;

#define LOC(line) AG_SOURCE_LOC("tape_rollback.cpp", line)

Tensor gradient_of(const std::function<Tensor(Tensor)>& loss, Tensor x) {
  ag::GradientTape tape;
  tape.watch(x);
  Tensor l = loss(x);
  return tape.gradient(l, x);
}

// eager == tape inside the trace (interpreter) == tape inside the trace (compiled).
void expect_gradients_agree(const char* what, const std::function<Tensor(Tensor)>& loss, const Tensor& x) {
  const Tensor want = gradient_of(loss, x);
  for (bool jit : {false, true}) {
    auto f = ag::function([&](Tensor x) { return gradient_of(loss, x); }, {.jit_compile = jit});
    EXPECT_TRUE(agtest::same_tensor(want, f(x), {1e-4, 1e-5})) << what << ", jit=" << jit;
  }
}

TEST(TapeRollback, AProbedLoopConditionAddsNothingToTheGradient) {
  const Tensor x = ag::constant({0.5f, -1.0f, 2.0f, 0.25f});
  expect_gradients_agree("condition reads the loop var and x", [](Tensor x) {
    Tensor y = x;
    ag::while_stmt([&] { return ag::reduce_sum(y * y) < 40.0f * ag::reduce_sum(x * x); },
                   [&] { y = y * 1.5f + ag::exp(ag::reduce_mean(x)); }, ag::state(y), {"y"}, LOC(1));
    return ag::reduce_sum(y);
  }, x);
  expect_gradients_agree("condition reads the loop var only", [](Tensor x) {
    Tensor y = x;
    ag::while_stmt([&] { return ag::reduce_sum(y * y) < 300.0f; }, [&] { y = y * 1.5f + 1.0f; }, ag::state(y), {"y"},
                   LOC(2));
    return ag::reduce_sum(y);
  }, x);
  expect_gradients_agree("a sum in the condition (its shape once leaked into the gradient)", [](Tensor x) {
    Tensor y = x;
    ag::while_stmt([&] { return ag::reduce_sum(y) < 10.0f * ag::reduce_sum(ag::abs(x)); }, [&] { y = y * 1.5f; },
                   ag::state(y), {"y"}, LOC(3));
    return ag::reduce_sum(y * y);
  }, x);
}

TEST(TapeRollback, ALoopTracedAgainForAGrowingShapeAddsNothingEither) {
  // y doubles in length every iteration: the loop is traced once with y: [4], rolled back, and
  // traced again with y: [?].
  const Tensor x = ag::constant({0.5f, 1.0f, 2.0f, 0.25f});
  expect_gradients_agree("growing loop var", [](Tensor x) {
    Tensor y = x;
    ag::while_stmt([&] { return ag::reduce_sum(y) < 30.0f; }, [&] { y = ag::concat({y, y * 0.5f}, 0); }, ag::state(y),
                   {"y"}, LOC(4));
    return ag::reduce_sum(y * y);
  }, x);
}

}  // namespace
