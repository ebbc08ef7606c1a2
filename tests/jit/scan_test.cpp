// cumsum and cumprod staged: eager == interpreter == JIT over dtypes, axes and flags, with a
// dim unknown while tracing, under a tape inside the Function, and in a staged loop.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;

TEST(JitScan, ThreeWay) {
  for (ag::DType d : {ag::int32, ag::int64, ag::float32, ag::float64}) {
    const Tensor x = ag::cast(agtest::sample(ag::float64, {3, 5, 4}, 7, agtest::Values::Moderate) * 0.3, d);
    auto fn = [](Tensor x) {
      return std::tuple{ag::cumsum(x, 0), ag::cumsum(x, 1, true), ag::cumsum(x, 2, false, true), ag::cumsum(x, -1, true, true),
                        ag::cumprod(x, 1), ag::cumprod(x, 2, true, true)};
    };
    const ag::FunctionStats s = agtest::expect_three_way("scan " + std::string(ag::dtype_name(d)), fn, {}, x);
    EXPECT_EQ(s.compiles + s.disk_hits, 1);
  }
}

TEST(JitScan, UnknownDimTapeAndLoop) {
  auto fn = [](Tensor x) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor acc = ag::zeros_like(x);
    Tensor i = ag::constant(0);
    ag::while_stmt([&] { return i < 3; },
                   [&] {
                     acc = acc + ag::cumsum(x * ag::cast(i + 1, ag::float64), 0, false, true);
                     i = i + 1;
                   },
                   ag::state(acc, i), {"acc", "i"}, ag::SourceLoc(__FILE__, __LINE__));
    const Tensor loss = ag::reduce_sum(ag::cumprod(acc * 0.1 + 1.0, 1) * x);
    return std::tuple{loss, tape.gradient(loss, x)};
  };
  const Tensor x = agtest::sample(ag::float64, {6, 3}, 3, agtest::Values::Moderate) * 0.1;
  const ag::FunctionStats s = agtest::expect_three_way_with(
      "scan", fn, {.input_signature = {ag::TensorSpec({-1, 3}, ag::float64)}}, {}, x);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

}  // namespace
