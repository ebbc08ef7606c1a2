// Gradients through collectives: every process's loss counts (the job's loss is their sum), so
// a gradient that crosses a collective is combined across processes. Eagerly under a tape, a
// tape inside a Function, and a Function under an eager tape; against the closed forms.
#include "distribute_test_util.h"

namespace {

using ag::Tensor;
using ag::distribute::ReduceOp;
using agtest::contribution;

// d/dx of sum over processes p of sum(w * collective(x_p)), on this process, three ways.
template <class Loss>
void expect_gradient(const Loss& loss, const Tensor& x, const Tensor& expected, const std::string& what) {
  {
    ag::GradientTape tape;
    tape.watch(x);
    agtest::expect_same(expected, tape.gradient(loss(x), x), {}, what + " [eager tape]");
  }
  auto inside = ag::function([&](Tensor t) {
    ag::GradientTape tape;
    tape.watch(t);
    return tape.gradient(loss(t), t);
  });
  agtest::expect_same(expected, inside(x), {}, what + " [tape in a Function]");
  auto traced = ag::function([&](Tensor t) { return loss(t); });
  ag::GradientTape tape;
  tape.watch(x);
  agtest::expect_same(expected, tape.gradient(traced(x), x), {}, what + " [Function under a tape]");
}

TEST(DistributeGradients, AllReduceSumAndMean) {
  const int n = ag::distribute::world_size();
  const Tensor x = contribution(ag::distribute::rank(), ag::float32);
  const Tensor w = ag::constant({1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  // loss_p = sum(w * all_reduce(x*x)) on every p: d/dx = n * w * 2x.
  expect_gradient([&](Tensor t) { return ag::reduce_sum(w * ag::distribute::all_reduce(t * t)); }, x,
                  w * 2.f * x * static_cast<float>(n), "sum");
  // mean: every process's loss counts once, each through 1/n of x: d/dx = w * 2x.
  expect_gradient([&](Tensor t) { return ag::reduce_sum(w * ag::distribute::all_reduce(t * t, ReduceOp::mean)); }, x,
                  w * 2.f * x, "mean");
}

TEST(DistributeGradients, AllReduceMaxGoesToTheProcessesHoldingIt) {
  const int n = ag::distribute::world_size();
  const Tensor x = contribution(ag::distribute::rank(), ag::float32);
  Tensor top = contribution(0, ag::float32);
  for (int p = 1; p < n; ++p) top = ag::maximum(top, contribution(p, ag::float32));
  const Tensor expected = ag::where(ag::equal(x, top), ag::ones({6}) * static_cast<float>(n), ag::zeros({6}));
  expect_gradient([&](Tensor t) { return ag::reduce_sum(ag::distribute::all_reduce(t, ReduceOp::max)); }, x, expected, "max");
}

TEST(DistributeGradients, BroadcastSendsTheSumToTheRoot) {
  const int n = ag::distribute::world_size();
  const Tensor x = contribution(ag::distribute::rank(), ag::float32);
  const float to_me = ag::distribute::rank() == 0 ? static_cast<float>(n) : 0.f;
  expect_gradient([&](Tensor t) { return ag::reduce_sum(ag::distribute::broadcast(t * 3.f, 0)); }, x,
                  ag::ones({6}) * (3.f * to_me), "broadcast");
}

TEST(DistributeGradients, AllGatherGivesEachProcessItsRows) {
  const int n = ag::distribute::world_size(), r = ag::distribute::rank();
  const Tensor x = ag::reshape(contribution(r, ag::float32), {2, 3});
  // w over the gathered [2n, 3]: process r's rows are 2r and 2r+1.
  const Tensor w = ag::reshape(ag::cast(ag::range(6 * n), ag::float32), {2 * n, 3});
  const Tensor expected = ag::slice(w, {2 * r, 0}, {2, 3}) * static_cast<float>(n);
  expect_gradient([&](Tensor t) { return ag::reduce_sum(w * ag::distribute::all_gather(t)); }, x, expected, "all_gather");
}

TEST(DistributeGradients, NestedFunctionsUnderATapeWithARepeatedArgument) {
  // inner(a, b) = all_reduce(a * b): called with one tensor twice, inside another Function, under
  // an eager tape and under a tape traced inside a third Function. d/dx sum(all_reduce(x*x)) = 2nx.
  const int n = ag::distribute::world_size();
  auto inner = ag::function([](Tensor a, Tensor b) { return ag::distribute::all_reduce(a * b); });
  auto outer = ag::function([&](Tensor t) { return ag::reduce_sum(inner(t, t)); });
  const Tensor x = contribution(ag::distribute::rank(), ag::float32);
  const Tensor expected = x * (2.f * static_cast<float>(n));
  expect_gradient([&](Tensor t) { return outer(t); }, x, expected, "nested, repeated argument");
  auto step = ag::function([&](Tensor t) {
    ag::GradientTape tape;
    tape.watch(t);
    const Tensor y = outer(t) + ag::reduce_sum(inner(t, ag::ones({6})));
    return tape.gradient(y, t);
  });
  agtest::expect_same(expected + static_cast<float>(n), step(x), {}, "two nested calls in a traced tape");
}

}  // namespace
