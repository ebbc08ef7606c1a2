// Staged while, as ag-rewrite emits it (docs/operators.md): results agree eagerly and
// traced; return/break/continue through flags; the staging rules raise ConversionErrors
// naming the variable and the line.
#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

#define LOC(line) AG_SOURCE_LOC("cf.cpp", line)

Tensor collatz_steps(Tensor n) {
  Tensor steps = 0;
  ag::while_stmt([&] { return n > 1; },
                 [&] {
                   ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"}, LOC(101));
                   steps += 1;
                 },
                 ag::state(n, steps), {"n", "steps"}, LOC(100));
  return steps;
}

TEST(StagedWhile, Collatz) {
  auto f = ag::function(collatz_steps, interpreted());
  for (int n : {1, 2, 3, 6, 7, 27}) EXPECT_EQ(f(Tensor(n)).item<int>(), collatz_steps(Tensor(n)).item<int>()) << n;
  EXPECT_EQ(f(Tensor(27)).item<int>(), 111);
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(StagedWhile, TanhLoopPrintsEachIteration) {
  agtest::PrintCapture prints;
  auto f = ag::function(
      [](Tensor x) {
        ag::while_stmt([&] { return ag::reduce_sum(x) > 1; },
                       [&] {
                         ag::print(x);
                         x = ag::tanh(x);
                       },
                       ag::state(x), {"x"}, LOC(110));
        return x;
      },
      interpreted());
  Tensor out = f(ag::constant({1.f, 1.f, 1.f}));
  EXPECT_LE(ag::reduce_sum(out).item<float>(), 1.f);
  EXPECT_GE(prints.lines().size(), 2u);
  EXPECT_EQ(prints.lines()[0], "[1 1 1]\n");
}

TEST(StagedWhile, LoopCarriedDtypeChangeIsAConversionError) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor acc = 0;
        ag::while_stmt([&] { return x > 0; },
                       [&] {
                         acc = ag::cast(acc, ag::float32) + 0.5f;
                         x -= 1;
                       },
                       ag::state(acc, x), {"acc", "x"}, LOC(120));
        return x;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(3)); }, {"'acc'", "i32[]", "f32[]", "cf.cpp:120", "dtype"});
}

TEST(StagedWhile, LoopShapesAreInferred) {
  auto f = ag::function(
      [](Tensor n) {
        Tensor xs = ag::constant({0});
        Tensor i = 0;
        ag::while_stmt([&] { return i < n; },
                       [&] {
                         xs = ag::concat({xs, ag::reshape(i, {1})}, 0);
                         i += 1;
                       },
                       ag::state(xs, i), {"xs", "i"}, LOC(130));
        return xs;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(4)).to_vector<int>(), (std::vector<int>{0, 0, 1, 2, 3}));
  EXPECT_EQ(f(Tensor(0)).to_vector<int>(), (std::vector<int>{0}));
  EXPECT_NE(f.concrete_functions()[0].graph_text().find("i32[?]"), std::string::npos);
}

TEST(StagedWhile, ShapeInvariantsAndMaximumIterations) {
  Tensor* pinned = nullptr;
  auto f = ag::function(
      [&](Tensor n) {
        Tensor xs = ag::zeros({1, 2});
        pinned = &xs;
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         ag::set_loop_options({.shape_invariants = {{&xs, {-1, 2}}}, .maximum_iterations = 3});
                         xs = ag::concat({xs, ag::ones({1, 2})}, 0);
                         n -= 1;
                       },
                       ag::state(xs, n), {"xs", "n"}, LOC(140));
        return xs;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(2)).shape(), ag::Shape({3, 2}));
  EXPECT_EQ(f(Tensor(10)).shape(), ag::Shape({4, 2}));  // stopped after 3 iterations
}

// TensorFlow's _try_handling_undefineds: a variable first given a value in the loop is carried
// from zeros of the type one iteration gives it; when the loop runs zero times, it has no value,
// and reading it raises InvalidArgumentError naming it, the loop and the read (TensorFlow's
// loop_created_variables_test: tf.function(f)(tf.constant(0)) raises).
TEST(StagedWhile, VariableFirstDefinedInLoopHasNoValueAfterZeroTrips) {
  auto f = ag::function(
      [](Tensor n, Tensor x) {
        Tensor last;
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         last = x * ag::cast(n, ag::float32);
                         n -= 1;
                       },
                       ag::state(last, n), {"last", "n"}, LOC(150));
        return last + 1;
      },
      interpreted());
  const Tensor x = ag::constant({1.f, 2.f});
  EXPECT_EQ(f(Tensor(3), x).to_vector<float>(), (std::vector<float>{2.f, 3.f}));  // last = x * 1
  AG_EXPECT_ERROR(ag::InvalidArgumentError, f(Tensor(0), x), "'last' has no value", "while loop at cf.cpp:150",
                  "ran zero times", "(at staged_while_test.cpp:");
  EXPECT_EQ(f(Tensor(1), x).to_vector<float>(), (std::vector<float>{2.f, 3.f}));  // usable after the error
  EXPECT_EQ(f.tracing_count(), 1);
}

// Only a read raises: a value never read is pruned with its check, and a read inside a branch
// that does not run (a return guard, `if (ran) use(v)`) checks there, when the branch runs.
TEST(StagedWhile, OnlyAReadOfTheValueAfterZeroTripsRaises) {
  auto f = ag::function(
      [](Tensor n, Tensor x) {
        Tensor last, unused;
        Tensor ran = false;
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         last = x * 2.0f;
                         unused = x * 3.0f;
                         ran = true;
                         n -= 1;
                       },
                       ag::state(last, unused, ran, n), {"last", "unused", "ran", "n"}, LOC(160));
        Tensor out = x;
        ag::if_stmt(ran, [&] { out = last; }, [&] { out = -x; }, ag::state(out), {"out"}, LOC(161));
        return out;
      },
      interpreted());
  const Tensor x = ag::constant({1.f, 2.f});
  EXPECT_EQ(f(Tensor(0), x).to_vector<float>(), (std::vector<float>{-1.f, -2.f}));
  EXPECT_EQ(f(Tensor(2), x).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
}

// A variable read in the body before anything assigned it can only ever see no value.
TEST(StagedWhile, ReadBeforeAnyValueNamesTheVariableAndTheLoop) {
  auto f = ag::function(
      [](Tensor n, Tensor x) {
        Tensor acc;
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         acc = acc + x;
                         n -= 1;
                       },
                       ag::state(acc, n), {"acc", "n"}, LOC(152));
        return acc;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(3), Tensor(1.f)); },
                                    {"'acc' is read inside the tensor-dependent while loop at cf.cpp:152",
                                     "before it has a value", "give it a value before the loop"});
}

// Set in one branch of an if in the body (`if (v > limit) { found = v; break; }`): the loop
// learns its type from that branch.
TEST(StagedWhile, VariableSetInOneBranchInsideTheLoopIsCarried) {
  auto f = ag::function(
      [](Tensor n) {
        Tensor found;
        Tensor i = 0;
        ag::while_stmt([&] { return i < n; },
                       [&] {
                         ag::if_stmt(i * i > 10, [&] { found = i; }, [] {}, ag::state(found), {"found"}, LOC(154));
                         i += 1;
                       },
                       ag::state(found, i), {"found", "i"}, LOC(153));
        return found;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(6)).item<int>(), 5);
  EXPECT_EQ(f(Tensor(2)).item<int>(), 0);  // never set: the zeros it started from
}

// `while (n > 0) { if (n == 5) return n * 100; n -= 1; } return n;` lowered as the rewriter does.
Tensor early_return(Tensor n) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::while_stmt([&] { return ag::and_(ag::not_(ag__do_return), [&] { return n > 0; }); },
                 [&] {
                   ag::if_stmt(n == 5,
                               [&] {
                                 ag__retval = n * 100;
                                 ag__do_return = true;
                               },
                               [] {}, ag::state(ag__retval, ag__do_return), {"ag__retval", "ag__do_return"}, LOC(161));
                   ag::if_stmt(ag::not_(ag__do_return), [&] { n -= 1; }, [] {}, ag::state(n), {"n"}, LOC(162));
                 },
                 ag::state(n, ag__retval, ag__do_return), {"n", "ag__retval", "ag__do_return"}, LOC(160));
  ag::if_stmt(ag::not_(ag__do_return),
              [&] {
                ag__retval = n;
                ag__do_return = true;
              },
              [] {}, ag::state(ag__retval, ag__do_return), {"ag__retval", "ag__do_return"}, LOC(163));
  return ag__retval;
}

TEST(StagedWhile, ReturnInsideLoopViaFlags) {
  auto f = ag::function(early_return, interpreted());
  for (int n : {0, 3, 5, 9}) EXPECT_EQ(f(Tensor(n)).item<int>(), early_return(Tensor(n)).item<int>()) << n;
  EXPECT_EQ(f(Tensor(9)).item<int>(), 500);
  EXPECT_EQ(f(Tensor(3)).item<int>(), 0);
}

// while (true-ish) with break and continue lowered to flags: sum of odd i below limit.
Tensor odd_sum(Tensor limit) {
  Tensor i = 0, total = 0;
  Tensor ag__break_1 = false;
  ag::while_stmt([&] { return ag::and_(ag::not_(ag__break_1), [&] { return i < 1000; }); },
                 [&] {
                   Tensor ag__continue_1 = false;
                   i += 1;
                   ag::if_stmt(i >= limit, [&] { ag__break_1 = true; }, [] {}, ag::state(ag__break_1), {"ag__break_1"},
                               LOC(171));
                   ag::if_stmt(ag::not_(ag__break_1),
                               [&] {
                                 ag::if_stmt(i % 2 == 0, [&] { ag__continue_1 = true; }, [] {}, ag::state(ag__continue_1),
                                             {"ag__continue_1"}, LOC(172));
                                 ag::if_stmt(ag::not_(ag__continue_1), [&] { total += i; }, [] {}, ag::state(total),
                                             {"total"}, LOC(173));
                               },
                               [] {}, ag::state(total), {"total"}, LOC(174));
                 },
                 ag::state(i, total, ag__break_1), {"i", "total", "ag__break_1"}, LOC(170));
  return total;
}

TEST(StagedWhile, BreakAndContinueViaFlags) {
  auto f = ag::function(odd_sum, interpreted());
  for (int limit : {1, 2, 7, 10}) EXPECT_EQ(f(Tensor(limit)).item<int>(), odd_sum(Tensor(limit)).item<int>()) << limit;
  EXPECT_EQ(f(Tensor(10)).item<int>(), 1 + 3 + 5 + 7 + 9);
}

TEST(StagedWhile, ConcreteLoopUnrollsAndTurnsStagedWhenItsConditionBecomesSymbolic) {
  auto unrolled = ag::function(
      [](Tensor x) {
        Tensor i = 0, acc = 0;
        ag::while_stmt([&] { return i < 3; },
                       [&] {
                         acc = acc + x;
                         i += 1;
                       },
                       ag::state(i, acc), {"i", "acc"}, LOC(180));
        return acc;
      },
      interpreted());
  EXPECT_EQ(unrolled(Tensor(2)).item<int>(), 6);
  EXPECT_EQ(unrolled.concrete_functions()[0].graph_text().find("While"), std::string::npos);

  auto switches = ag::function(
      [](Tensor x) {
        Tensor k = 5, steps = 0;
        ag::while_stmt([&] { return k > 0; },
                       [&] {
                         k = k - x;  // k turns symbolic after the first iteration
                         steps += 1;
                       },
                       ag::state(k, steps), {"k", "steps"}, LOC(181));
        return steps;
      },
      interpreted());
  EXPECT_EQ(switches(Tensor(2)).item<int>(), 3);
  EXPECT_EQ(switches(Tensor(10)).item<int>(), 1);
  EXPECT_NE(switches.concrete_functions()[0].graph_text().find("While"), std::string::npos);
}

TEST(StagedWhile, PrintInConditionRunsOncePerEvaluation) {
  agtest::PrintCapture prints;
  auto f = ag::function(
      [](Tensor n) {
        ag::while_stmt(
            [&] {
              ag::print("check", n);
              return n > 0;
            },
            [&] { n -= 1; }, ag::state(n), {"n"}, LOC(190));
        return n;
      },
      interpreted());
  f(Tensor(2));
  EXPECT_EQ(prints.text(), "check 2\ncheck 1\ncheck 0\n");
}

TEST(StagedWhile, ConditionThatModifiesVariablesIsAConversionError) {
  auto f = ag::function(
      [](Tensor n) {
        ag::while_stmt(
            [&] {
              n = n - 1;
              return n > 0;
            },
            [&] {}, ag::state(n), {"n"}, LOC(195));
        return n;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(3)); }, {"modifies 'n'", "cf.cpp:195"});
}

}  // namespace
