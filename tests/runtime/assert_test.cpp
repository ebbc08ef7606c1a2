// ag::assert_true and the comparison asserts: eager checks, staged Assert nodes on the
// interpreter (kept by pruning, in program order with prints), inside staged if/while.
#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

#define LOC(line) AG_SOURCE_LOC("assert.cpp", line)

// The "(at assert_test.cpp:N)" suffix of an assert written on line N of this file.
std::string at_line(int line) { return "(at assert_test.cpp:" + std::to_string(line) + ")"; }

// The message of the InvalidArgumentError `f` throws ("" if none).
template <class F>
std::string failure_of(F&& f) {
  try {
    f();
  } catch (const ag::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

TEST(AssertEager, FailingAssertNamesMessageElementsAndLine) {
  const Tensor c = ag::constant({true, false, true, false});
  int line = 0;
  expect_error<ag::InvalidArgumentError>(
      [&] { line = __LINE__, ag::assert_true(c, "x must be positive"); },
      {"assertion failed: x must be positive: condition is false at 2 of 4 elements, first at index [1]"});
  const std::string msg = failure_of([&] { line = __LINE__, ag::assert_true(c); });
  EXPECT_NE(msg.find(at_line(line)), std::string::npos) << msg;
  expect_error<ag::InvalidArgumentError>([&] { ag::assert_true(ag::reshape(c, {2, 2})); },
                                         {"assertion failed: condition is false at 2 of 4 elements, first at index [0, 1]"});
  expect_error<ag::InvalidArgumentError>([&] { ag::assert_true(Tensor(false), "scalar"); },
                                         {"assertion failed: scalar: condition is false ("});
}

TEST(AssertEager, PassingAssertIsANoOp) {
  ag::assert_true(ag::constant({true, true}));
  ag::assert_true(Tensor(true), "fine");
  ag::assert_true(ag::zeros({0}) > 1);  // no elements: nothing is false
  ag::assert_equal(ag::constant({1, 2}), ag::constant({1, 2}));
  ag::assert_less(ag::constant({1, 2}), 3);
  ag::assert_greater(ag::constant({{1.5f}, {2.5f}}), ag::constant({1.f, 0.f}));  // broadcasts to [2,2]
  SUCCEED();
}

TEST(AssertEager, ComparisonAssertsShowBothOperands) {
  int line = 0;
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::assert_equal(ag::constant({1, 2, 3}), ag::constant({1, 5, 3}), "same"); },
      {"assertion failed: same: ag::assert_equal(x, y) is false at 1 of 3 elements, first at index [1]; x = [1 2 3]; "
       "y = [1 5 3]"});
  const std::string msg = failure_of([&] { line = __LINE__, ag::assert_less(ag::constant({1, 4}), 3); });
  EXPECT_NE(msg.find("ag::assert_less(x, y) is false at 1 of 2 elements, first at index [1]; x = [1 4]; y = 3 " +
                     at_line(line)),
            std::string::npos)
      << msg;
  expect_error<ag::InvalidArgumentError>([&] { ag::assert_greater(ag::constant({{1.5f}, {2.5f}}), ag::constant({2.f, 0.f})); },
                                         {"ag::assert_greater(x, y) is false at 1 of 4 elements, first at index [0, 0]"});
}

TEST(AssertEager, BadOperandsAreUserErrors) {
  expect_error<ag::TypeError>([&] { ag::assert_true(ag::constant({1, 0})); },
                              {"condition must be a bool tensor", "int32"});
  expect_error<ag::ValueError>([&] { ag::assert_equal(ag::zeros({2}), ag::zeros({3})); }, {"[2]", "[3]"});
  expect_error<ag::TypeError>([&] { ag::assert_equal(ag::zeros({2}), ag::zeros({2}, ag::int32)); }, {"float32", "int32"});
  expect_error<ag::ValueError>([&] { ag::assert_true(Tensor()); }, {"ag::assert_true"});
}

int g_assert_line = 0;
Tensor checked_sqrt(Tensor x) {
  g_assert_line = __LINE__ + 1;
  ag::assert_greater(x, 0.f, "sqrt needs positive input");
  return ag::sqrt(x);
}

TEST(AssertTraced, InterpreterRaisesTheEagerErrorWithItsLine) {
  auto f = ag::function(checked_sqrt, interpreted());
  const Tensor ok = ag::constant({4.f, 9.f});
  EXPECT_EQ(f(ok).to_vector<float>(), checked_sqrt(ok).to_vector<float>());
  const Tensor bad = ag::constant({4.f, -1.f});
  std::string eager, traced;
  try {
    checked_sqrt(bad);
  } catch (const ag::InvalidArgumentError& e) {
    eager = e.what();
  }
  try {
    f(bad);
  } catch (const ag::InvalidArgumentError& e) {
    traced = e.what();
  }
  EXPECT_EQ(traced, eager);
  EXPECT_NE(traced.find("assertion failed: sqrt needs positive input: ag::assert_greater(x, y) is false at 1 of 2 "
                        "elements, first at index [1]; x = [4 -1]; y = 0 " + at_line(g_assert_line)),
            std::string::npos)
      << traced;
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(AssertTraced, PruningKeepsAnAssertWhoseResultIsUnused) {
  auto f = ag::function(
      [](Tensor x) {
        ag::assert_true(ag::reduce_all(x < 100), "small");  // nothing reads it
        return x * 2;
      },
      interpreted());
  EXPECT_EQ(f(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{2, 4}));
  const std::string g = f.concrete_functions()[0].graph_text();
  EXPECT_NE(g.find("Assert("), std::string::npos) << g;
  EXPECT_NE(g.find("ReduceAll("), std::string::npos) << g;
  expect_error<ag::InvalidArgumentError>([&] { f(ag::constant({1, 200})); }, {"assertion failed: small"});
}

TEST(AssertTraced, AnAssertThatFoldsToTrueIsDropped) {
  auto f = ag::function(
      [](Tensor x) {
        ag::assert_equal(ag::constant({1, 2}) * 2, ag::constant({2, 4}), "arithmetic");  // folds to [true true]
        ag::assert_less(ag::reduce_sum(x), 10, "kept");
        return x;
      },
      interpreted());
  f(ag::constant({1, 2}));
  const std::string g = f.concrete_functions()[0].graph_text();
  EXPECT_EQ(g.find("arithmetic"), std::string::npos) << g;
  EXPECT_NE(g.find("kept"), std::string::npos) << g;
}

TEST(AssertTraced, RunsInProgramOrderWithPrints) {
  agtest::PrintCapture prints;
  auto f = ag::function(
      [](Tensor x) {
        ag::print("before", x);
        ag::assert_true(x > 0, "positive");
        ag::print("after", x);
        return x;
      },
      interpreted());
  f(Tensor(3));
  EXPECT_EQ(prints.text(), "before 3\nafter 3\n");
  expect_error<ag::InvalidArgumentError>([&] { f(Tensor(-3)); }, {"assertion failed: positive"});
  EXPECT_EQ(prints.text(), "before 3\nafter 3\nbefore -3\n");
}

TEST(AssertTraced, AConcreteConditionIsStagedNotCheckedWhileTracing) {
  // The failing assert sits in a branch that only some calls take: tracing must not fail.
  auto f = ag::function(
      [](Tensor x) {
        Tensor y = x;
        ag::if_stmt(x > 10, [&] { ag::assert_true(Tensor(false), "too big"), y = x * 0; }, [] {}, ag::state(y), {"y"},
                    LOC(1));
        return y;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(5)).item<int>(), 5);
  expect_error<ag::InvalidArgumentError>([&] { f(Tensor(11)); }, {"assertion failed: too big: condition is false"});
  EXPECT_EQ(f.tracing_count(), 1);
}

Tensor countdown_checked(Tensor n) {
  Tensor i = n;
  ag::while_stmt([&] { return i > 0; },
                 [&] {
                   ag::assert_true(i != 3, "never 3");
                   i -= 2;
                 },
                 ag::state(i), {"i"}, LOC(2));
  return i;
}

TEST(AssertTraced, InsideStagedIfAndWhile) {
  auto f = ag::function(countdown_checked, interpreted());
  EXPECT_EQ(f(Tensor(8)).item<int>(), countdown_checked(Tensor(8)).item<int>());
  expect_error<ag::InvalidArgumentError>([&] { countdown_checked(Tensor(7)); }, {"assertion failed: never 3"});
  expect_error<ag::InvalidArgumentError>([&] { f(Tensor(7)); }, {"assertion failed: never 3"});
  EXPECT_NE(f.concrete_functions()[0].graph_text().find("Assert("), std::string::npos);

  agtest::PrintCapture prints;
  auto g = ag::function(
      [](Tensor x) {
        ag::if_stmt(x < 0, [&] { ag::print("negative"), ag::assert_true(x > -5, "not too negative"); },
                    [&] { ag::print("other"); }, ag::state(), {}, LOC(3));
        return x;
      },
      interpreted());
  g(Tensor(-1));
  g(Tensor(1));
  expect_error<ag::InvalidArgumentError>([&] { g(Tensor(-7)); }, {"not too negative"});
  EXPECT_EQ(prints.text(), "negative\nother\nnegative\n");
}

}  // namespace
