// enable_check_numerics() and ag::debugging::check_numerics, eagerly and on the graph
// interpreter: the first op that makes a NaN or an Inf is named with its element, its result's
// type and its line; staged loops, gradients and the explicit op; off, nothing is checked.
#include "ag/detail/ops_internal.h"
#include "ag/graph/passes.h"
#include "ag/graph/verifier.h"
#include "../common/error_message.h"
#include "../common/nan_in_a_loop.h"
#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::interpreted;

std::string at_line(int line) { return "(at check_numerics_test.cpp:" + std::to_string(line) + ")"; }

// Turns the checks on for one test, and off again whatever happens.
struct ChecksOn {
  ChecksOn() { ag::debugging::enable_check_numerics(); }
  ~ChecksOn() { ag::debugging::disable_check_numerics(); }
};

TEST(CheckNumerics, OffNothingIsChecked) {
  ASSERT_FALSE(ag::debugging::check_numerics_enabled());
  const Tensor y = ag::log(ag::constant({-1.f, 1.f}));
  EXPECT_TRUE(std::isnan(y.to_vector<float>()[0]));
  auto f = ag::function(agtest::roots, interpreted());
  EXPECT_TRUE(std::isnan(f(ag::constant({10.f, 5.f, 2.f}), Tensor(3)).to_vector<float>()[2]));
}

TEST(CheckNumerics, EagerNamesTheOpTheElementAndTheLine) {
  const ChecksOn on;
  int line = 0;
  const std::string msg = agtest::error_message([&] {
    const Tensor x = ag::constant({{1.f, 2.f, 3.f}, {4.f, 0.f, 6.f}});
    line = __LINE__ + 1;
    (void)(1.f / x);
  });
  EXPECT_EQ(msg, "check_numerics: operator/ (ag::divide) produced inf at element [1, 1] of its float32[2,3] result " +
                     at_line(line));
  // Integers and data movement are not checked; finite values pass.
  EXPECT_EQ(agtest::error_message([] { (void)ag::reshape(ag::constant({1.f, 2.f}) * 3.f, {2, 1}); }), "no error");
  EXPECT_EQ(agtest::error_message([] { (void)ag::transpose(ag::constant({{NAN, 1.f}})); }), "no error");
  // A scalar names no element; float64 and -inf.
  EXPECT_EQ(agtest::error_message([] { (void)ag::log(Tensor(0.0)); }).rfind("check_numerics: ag::log produced -inf of its float64[] result", 0),
            0u);
}

TEST(CheckNumerics, StagedLoopOnTheInterpreterRaisesTheEagerError) {
  const ChecksOn on;
  const Tensor x = ag::constant({10.f, 5.f, 2.f});
  const std::string eager = agtest::error_message([&] { agtest::roots(x, Tensor(3)); });
  EXPECT_EQ(eager, "check_numerics: ag::sqrt produced NaN at element [2] of its float32[3] result (at nan_in_a_loop.h:" +
                       std::to_string(agtest::nan_in_a_loop_line()) + ")");
  auto f = ag::function(agtest::roots, interpreted());
  EXPECT_EQ(agtest::error_message([&] { f(x, Tensor(3)); }), eager);
  // Two steps stay real: the same values as without checks.
  const Tensor ok = f(x, Tensor(2));
  ag::debugging::disable_check_numerics();
  EXPECT_TRUE(agtest::same_bits(ok, f(x, Tensor(2))));
  ag::debugging::enable_check_numerics();
  EXPECT_EQ(f.tracing_count(), 1);  // checks do not retrace
}

TEST(CheckNumerics, GradientsAreCheckedToo) {
  const ChecksOn on;
  const Tensor x = ag::constant({4.f, 0.f});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::reduce_sum(ag::sqrt(x));
  // d sqrt(x)/dx = 0.5 / sqrt(x): inf at x = 0, made by the gradient's division.
  const std::string msg = agtest::error_message([&] { (void)tape.gradient(y, x); });
  EXPECT_NE(msg.find("produced inf at element [1] of its float32[2] result"), std::string::npos) << msg;
}

TEST(CheckNumerics, ExplicitOpEagerStagedAndItsGradient) {
  auto f = ag::function([](Tensor x) { return ag::debugging::check_numerics(x * x, "squares") + 1.f; }, interpreted());
  const Tensor big = ag::constant({1.f, 3e20f});
  for (const std::string& msg : {agtest::error_message([&] { (void)ag::debugging::check_numerics(big * big, "squares"); }),
                                 agtest::error_message([&] { f(big); })})
    EXPECT_EQ(msg.rfind("check_numerics: squares: the tensor has inf at element [1] (float32[2])", 0), 0u) << msg;
  agtest::expect_values(f(ag::constant({1.f, 2.f})), std::vector<float>{2.f, 5.f});
  const Tensor x = ag::constant({1.f, 2.f});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::reduce_sum(ag::debugging::check_numerics(x * x));
  agtest::expect_values(tape.gradient(y, x), std::vector<float>{2.f, 4.f});
  EXPECT_THROW((void)ag::debugging::check_numerics(ag::constant({1, 2})), ag::TypeError);
}

TEST(CheckNumerics, PassChecksComputedFloatResultsOnly) {
  auto f = ag::function([](Tensor x, Tensor k) { return ag::matmul(ag::transpose(x), ag::exp(x)) + ag::cast(k * 2, ag::float32); },
                         interpreted());
  const ag::Graph& g = f.get_concrete_function(ag::TensorSpec({2, 2}, ag::float32), ag::TensorSpec({}, ag::int32)).graph();
  const ag::Graph checked = ag::insert_numeric_checks(g);
  // exp, matmul, cast, add: checked; transpose and the int32 multiply: not.
  EXPECT_EQ(agtest::count_op(checked, ag::OpKind::CheckNumerics), 4u) << ag::graph_to_text(checked);
  EXPECT_NO_THROW(ag::verify_graph(checked));
}

}  // namespace
