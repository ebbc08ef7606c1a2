// Processes that call different collectives: every one of them gets the same
// InvalidArgumentError naming each process's call, eagerly and from compiled code, and they stay
// in step for the next collective (the other failures end the job: failure_check.cpp).
#include "distribute_test_util.h"

namespace {

using ag::Tensor;

// The message on every process, for `call` made with one extra element per rank.
void expect_mismatch_named(const std::function<Tensor(Tensor)>& call, const std::string& what) {
  const int r = ag::distribute::rank();
  const Tensor x = ag::ones({r + 1}, ag::float32);
  try {
    call(x);
    if (ag::distribute::world_size() > 1) ADD_FAILURE() << what << ": no error";
  } catch (const ag::InvalidArgumentError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the processes called different collectives"), std::string::npos) << m;
    for (int p = 0; p < ag::distribute::world_size(); ++p)
      EXPECT_NE(m.find(fmt::format("process {}: all_reduce(sum) of float32[{}] (at mismatch_test.cpp:", p, p + 1)),
                std::string::npos)
          << what << ": " << m;
  }
  EXPECT_EQ(ag::distribute::all_reduce(Tensor(2)).item<int32_t>(), 2 * ag::distribute::world_size()) << what << ": in step after";
}

TEST(DistributeMismatch, ShapesThatDifferNameEveryProcess) {
  expect_mismatch_named([](Tensor x) { return ag::distribute::all_reduce(x); }, "eager");
  auto interp = ag::function([](Tensor x) { return ag::distribute::all_reduce(x); }, {.jit_compile = false});
  expect_mismatch_named([&](Tensor x) { return interp(x); }, "interpreter");
  auto jit = ag::function([](Tensor x) { return ag::distribute::all_reduce(x); });
  expect_mismatch_named([&](Tensor x) { return jit(x); }, "jit");
}

TEST(DistributeMismatch, DifferentCollectivesOrRoots) {
  if (ag::distribute::world_size() == 1) GTEST_SKIP() << "one process cannot disagree with itself";
  const int r = ag::distribute::rank();
  const Tensor x = ag::ones({2}, ag::float32);
  EXPECT_THROW(r == 0 ? ag::distribute::broadcast(x, 0) : ag::distribute::all_reduce(x), ag::InvalidArgumentError);
  EXPECT_THROW(ag::distribute::broadcast(x, r == 0 ? 1 : 0), ag::InvalidArgumentError);
  EXPECT_THROW(r == 0 ? ag::distribute::all_reduce(x, ag::distribute::ReduceOp::max) : ag::distribute::all_reduce(x),
               ag::InvalidArgumentError);
  EXPECT_THROW(r == 0 ? (ag::distribute::barrier(), x) : ag::distribute::all_reduce(x), ag::InvalidArgumentError);
  EXPECT_EQ(ag::distribute::all_reduce(Tensor(1)).item<int32_t>(), ag::distribute::world_size());
}

}  // namespace
