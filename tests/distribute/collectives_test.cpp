// ag::distribute on several processes (run by ctest under mpirun -np 2 and -np 3, and once
// without a launcher as a single process). Every process computes what every other one
// contributes (the operands are functions of the rank), so each checks the collectives against
// a single-process reference: eagerly, on the interpreter and compiled (eager == interpreter == JIT).
#include "distribute_test_util.h"

namespace {

using ag::Tensor;
using ag::distribute::ReduceOp;
using agtest::contribution;
using agtest::expect_three_way;

TEST(Distribute, RankAndWorldSizeFromTheLauncher) {
  const char* launched = std::getenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(ag::distribute::world_size(), launched ? std::atoi(launched) : 1);
  EXPECT_GE(ag::distribute::rank(), 0);
  EXPECT_LT(ag::distribute::rank(), ag::distribute::world_size());
  // Every process sees every rank once, in order.
  const Tensor ranks = ag::distribute::all_gather(ag::constant({ag::distribute::rank()}));
  std::vector<int32_t> expected(static_cast<size_t>(ag::distribute::world_size()));
  for (size_t r = 0; r < expected.size(); ++r) expected[r] = static_cast<int32_t>(r);
  EXPECT_EQ(ranks.to_vector<int32_t>(), expected);
  ag::distribute::barrier();
}

// The reference: the same reduction over every process's contribution, computed here.
Tensor reference_reduce(ag::DType dtype, ReduceOp op) {
  Tensor acc = contribution(0, dtype);
  for (int r = 1; r < ag::distribute::world_size(); ++r) {
    const Tensor x = contribution(r, dtype);
    acc = op == ReduceOp::max ? ag::maximum(acc, x) : op == ReduceOp::min ? ag::minimum(acc, x) : acc + x;
  }
  if (op == ReduceOp::mean) acc = acc / ag::cast(Tensor(ag::distribute::world_size()), dtype);
  return acc;
}

TEST(Distribute, AllReduceEveryOpAndDtypeEagerInterpretedCompiled) {
  for (ag::DType dtype : {ag::float32, ag::float64, ag::int32, ag::int64})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min}) {
      if (op == ReduceOp::mean && !ag::is_floating(dtype)) continue;  // a type error, tested below
      const std::string what = fmt::format("all_reduce({}) of {}", ag::distribute::reduce_op_name(op), ag::dtype_name(dtype));
      const Tensor x = contribution(ag::distribute::rank(), dtype);
      agtest::expect_same(reference_reduce(dtype, op), ag::distribute::all_reduce(x, op), {}, what + " [eager]");
      const auto stats = expect_three_way(what, [op](Tensor t) { return ag::distribute::all_reduce(t * 1, op) + 0; }, {}, x);
      EXPECT_EQ(stats.compiles + stats.disk_hits, agtest::kCompiles) << what;
    }
}

TEST(Distribute, BroadcastFromTheLastRank) {
  const int root = ag::distribute::world_size() - 1;
  const Tensor mine = contribution(ag::distribute::rank(), ag::float32);
  const Tensor expected = contribution(root, ag::float32);
  agtest::expect_same(expected, ag::distribute::broadcast(mine, root), {}, "eager");
  expect_three_way("broadcast", [root](Tensor t) { return ag::distribute::broadcast(t, root) * 2.f; }, {}, mine);
  // Any dtype moves as bytes.
  const Tensor flags = ag::constant({ag::distribute::rank() == root, true});
  EXPECT_EQ(ag::distribute::broadcast(flags, root).to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST(Distribute, AllGatherStacksAlongTheFirstAxisInRankOrder) {
  const Tensor mine = contribution(ag::distribute::rank(), ag::float64);
  std::vector<Tensor> parts;
  for (int r = 0; r < ag::distribute::world_size(); ++r) parts.push_back(contribution(r, ag::float64));
  const Tensor expected = ag::concat(parts, 0);
  agtest::expect_same(expected, ag::distribute::all_gather(mine), {}, "eager");
  expect_three_way("all_gather", [](Tensor t) { return ag::distribute::all_gather(t - 1.0) + 1.0; }, {}, mine);
}

TEST(Distribute, CollectivesInAStagedLoopRunOncePerIteration) {
  // x <- all_reduce(x, mean) + 1, three times: every process ends with the mean plus 3.
  auto loop = [](Tensor x, Tensor n) {
    Tensor i = Tensor(0);
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     x = ag::distribute::all_reduce(x, ReduceOp::mean) + 1.f;
                     i += 1;
                   },
                   ag::state(i, x), {"i", "x"}, AG_SOURCE_LOC("collectives_test.cpp", 1));
    return x;
  };
  const Tensor x = contribution(ag::distribute::rank(), ag::float32);
  const Tensor expected = reference_reduce(ag::float32, ReduceOp::mean) + 3.f;
  expect_three_way("staged loop", loop, {}, x, Tensor(3));
  agtest::expect_same(expected, ag::function(loop)(x, Tensor(3)), {}, "mean + 3");
}

TEST(Distribute, SmallAllReducesAreFusedIntoOneBuffer) {
  // Ten gradients of different shapes and one of another dtype: one float32 collective and one
  // int32 in the optimized graph, results as without fusion.
  auto step = [](Tensor a, Tensor b, Tensor k) {
    std::vector<Tensor> grads;
    for (int i = 0; i < 5; ++i) grads.push_back(a * static_cast<float>(i + 1));
    for (int i = 0; i < 5; ++i) grads.push_back(b - static_cast<float>(i));
    grads = ag::distribute::all_reduce_gradients(grads, ReduceOp::sum);
    Tensor total = ag::reduce_sum(grads[0]);
    for (size_t i = 1; i < grads.size(); ++i) total = total + ag::reduce_sum(grads[i]) * static_cast<float>(i);
    return std::make_tuple(total, grads[9], ag::distribute::all_reduce(k, ReduceOp::max));
  };
  const int r = ag::distribute::rank();
  const Tensor a = contribution(r, ag::float32), b = ag::reshape(contribution(r, ag::float32), {3, 2});
  const Tensor k = ag::constant({r, 2 * r});
  expect_three_way("fused gradients", step, {}, a, b, k);
  auto f = ag::function(step);
  auto cf = f.get_concrete_function(a, b, k);
  const std::string graph = cf.graph_text();
  EXPECT_EQ(agtest::count_of(graph, "AllReduce("), 2) << graph;
}

TEST(Distribute, LargeTensorsAreReducedOnTheirOwn) {
  auto f = ag::function([](Tensor a, Tensor b) {
    return std::make_tuple(ag::distribute::all_reduce(a), ag::distribute::all_reduce(b));
  });
  const Tensor big = ag::ones({2 << 20}, ag::float32);  // 8 MB: over the fusion limit
  const auto [x, y] = f(big, big);
  EXPECT_EQ(agtest::count_of(f.get_concrete_function(big, big).graph_text(), "Concat("), 0);
  EXPECT_EQ(x.to_vector<float>()[12345], static_cast<float>(ag::distribute::world_size()));
  EXPECT_EQ(y.to_vector<float>()[(2 << 20) - 1], static_cast<float>(ag::distribute::world_size()));
}

TEST(Distribute, BadArgumentsAreErrorsBeforeAnyMessage) {
  const Tensor i = ag::constant({1, 2});
  EXPECT_THROW(ag::distribute::all_reduce(i, ReduceOp::mean), ag::TypeError);
  EXPECT_THROW(ag::distribute::all_reduce(ag::constant({true}), ReduceOp::sum), ag::TypeError);
  EXPECT_THROW(ag::distribute::all_gather(Tensor(1.f)), ag::TypeError);
  EXPECT_THROW(ag::distribute::broadcast(i, ag::distribute::world_size()), ag::ValueError);
  // Still in step: a collective after the errors works.
  EXPECT_EQ(ag::distribute::all_reduce(Tensor(1)).item<int32_t>(), ag::distribute::world_size());
}

TEST(Distribute, GraphTextCarriesTheAttributes) {
  auto f = ag::function([](Tensor x) {
    return ag::distribute::all_gather(ag::distribute::broadcast(ag::distribute::all_reduce(x, ReduceOp::max), 0));
  });
  const std::string text = f.get_concrete_function(ag::TensorSpec({3}, ag::float32)).graph_text();
  EXPECT_NE(text.find("reduce=max"), std::string::npos) << text;
  EXPECT_NE(text.find("root=0"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("processes={}", ag::distribute::world_size())), std::string::npos) << text;
  EXPECT_EQ(ag::graph_to_text(ag::graph_from_text(text)), text);
}

}  // namespace
