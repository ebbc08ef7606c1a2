// Staged control flow, written exactly as ag-rewrite emits it (docs/operators.md): results
// agree eagerly and traced; the staging rules raise ConversionErrors naming variable and line.
#include <regex>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

#define LOC(line) AG_SOURCE_LOC("cf.cpp", line)

// if reduce_sum(x) > 0: abs(x) else: square(x)   (the guide's conditional)
Tensor conditional(Tensor x) {
  Tensor y;
  ag::if_stmt(ag::reduce_sum(x) > 0, [&] { y = ag::abs(x); }, [&] { y = ag::square(x); }, ag::state(y), {"y"}, LOC(3));
  return y;
}

TEST(StagedIf, BothBranchesTracedOnceResultsAgree) {
  auto f = ag::function(conditional, interpreted());
  for (auto v : {std::vector<float>{1, -2, 3}, std::vector<float>{-1, -2, 0.5f}}) {
    Tensor x = ag::constant(v);
    EXPECT_EQ(f(x).to_vector<float>(), conditional(x).to_vector<float>());
  }
  EXPECT_EQ(f.tracing_count(), 1);
  const std::string g = f.concrete_functions()[0].graph_text();
  EXPECT_NE(g.find("If("), std::string::npos) << g;
  EXPECT_NE(g.find("Abs("), std::string::npos);
  EXPECT_NE(g.find("Square("), std::string::npos);
}

TEST(StagedIf, OnlyTheTakenBranchPrintsAtRunTime) {
  agtest::PrintCapture prints;
  int traced_then = 0, traced_else = 0;
  auto f = ag::function(
      [&](Tensor x) {
        ag::if_stmt(x > 0, [&] { ++traced_then, ag::print("positive"); }, [&] { ++traced_else, ag::print("other"); },
                    ag::state(), {}, LOC(10));
        return x;
      },
      interpreted());
  f(Tensor(1));
  f(Tensor(-1));
  f(Tensor(2));
  EXPECT_EQ(traced_then, 1);
  EXPECT_EQ(traced_else, 1);
  EXPECT_EQ(prints.text(), "positive\nother\npositive\n");
}

TEST(StagedIf, VariableAssignedInOneBranchWithoutPriorValue) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor y;
        ag::if_stmt(x > 0, [&] { y = x; }, [] {}, ag::state(y), {"y"}, LOC(20));
        return y + 1;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(1)); }, {"'y'", "then branch", "cf.cpp:20", "not in the else"});
}

TEST(StagedIf, IncrementInOneBranchIsFine) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor i = 0;
        ag::if_stmt(x > 0, [&] { i += 1; }, [] {}, ag::state(i), {"i"}, LOC(30));
        return i;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(5)).item<int>(), 1);
  EXPECT_EQ(f(Tensor(-5)).item<int>(), 0);
}

TEST(StagedIf, NonTensorLocalModifiedIsAConversionErrorOnlyWhenStaged) {
  auto body = [](Tensor x) {
    int count = 0;
    ag::if_stmt(x > 0, [&] { count += 1; }, [] {}, ag::state(count), {"count"}, LOC(40));
    return x + count;
  };
  EXPECT_EQ(body(Tensor(3)).item<int>(), 4);  // eagerly it is plain C++
  auto f = ag::function(body, interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(3)); }, {"'count'", "int", "cf.cpp:40", "ag::Tensor"});
}

Tensor g_global_tensor = 0;

TEST(StagedIf, GlobalModifiedIsAConversionError) {
  auto f = ag::function(
      [](Tensor x) {
        ag::if_stmt(x > 0, [&] { g_global_tensor = x; }, [] {}, ag::state(g_global_tensor), {"::g_global_tensor"}, LOC(50));
        return x;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(3)); }, {"global variable 'g_global_tensor'", "cf.cpp:50"});
}

TEST(StagedIf, BranchesMustAgreeOnDtype) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor y = 0;
        ag::if_stmt(x > 0, [&] { y = 1.5f; }, [&] { y = 2; }, ag::state(y), {"y"}, LOC(60));
        return y;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(1)); }, {"'y'", "f32[]", "i32[]", "cf.cpp:60", "ag::cast"});
}

TEST(StagedIf, BranchesMayDisagreeOnShape) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor y;
        ag::if_stmt(ag::reduce_sum(x) > 0, [&] { y = ag::concat({x, x}, 0); }, [&] { y = x; }, ag::state(y), {"y"},
                    LOC(70));
        return y;
      },
      interpreted());
  EXPECT_EQ(f(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(f(ag::constant({-1, -2})).to_vector<int>(), (std::vector<int>{-1, -2}));
  EXPECT_NE(f.concrete_functions()[0].graph_text().find("i32[?]"), std::string::npos);
}

TEST(StagedIf, NonScalarConditionIsAValueError) {
  auto f = ag::function(
      [](Tensor x) {
        ag::if_stmt(x > 0, [&] {}, [] {}, ag::state(), {}, LOC(80));
        return x;
      },
      interpreted());
  expect_error<ag::ValueError>([&] { f(ag::constant({1, 2})); }, {"scalar", "[2]", "reduce_any"});
}

TEST(StagedIf, NestedIfsCaptureOuterValuesAcrossLevels) {
  auto body = [](Tensor x, Tensor a, Tensor b) {
    Tensor r = 0;
    ag::if_stmt(x > 0,
                [&] {
                  ag::if_stmt(x > 10, [&] { r = a * b; }, [&] { r = a + b; }, ag::state(r), {"r"}, LOC(91));
                },
                [&] { r = a - b; }, ag::state(r), {"r"}, LOC(90));
    return r;
  };
  auto f = ag::function(body, interpreted());
  for (int x : {-5, 5, 50}) EXPECT_EQ(f(Tensor(x), Tensor(3), Tensor(4)).item<int>(), body(Tensor(x), Tensor(3), Tensor(4)).item<int>());
  EXPECT_EQ(f.tracing_count(), 1);
}

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

TEST(StagedWhile, VariableFirstDefinedInLoopUsedAfterIsAConversionError) {
  auto f = ag::function(
      [](Tensor n) {
        Tensor last;
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         last = n * 10;
                         n -= 1;
                       },
                       ag::state(last, n), {"last", "n"}, LOC(150));
        return last + 1;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(3)); }, {"'last'", "no value before", "cf.cpp:150", "zero times"});
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

void fizzbuzz(Tensor n, int& traced_loop, int& traced_branches) {
  ag::for_stmt(
      ag::range(1, n + 1), ag::no_extra_test,
      [&](Tensor i) {
        ++traced_loop;
        ag::if_stmt(i % 15 == 0, [&] { ++traced_branches, ag::print("fizzbuzz"); },
                    [&] {
                      ag::if_stmt(i % 3 == 0, [&] { ++traced_branches, ag::print("fizz"); },
                                  [&] {
                                    ag::if_stmt(i % 5 == 0, [&] { ++traced_branches, ag::print("buzz"); },
                                                [&] { ++traced_branches, ag::print(i); }, ag::state(), {}, LOC(204));
                                  },
                                  ag::state(), {}, LOC(203));
                    },
                    ag::state(), {}, LOC(202));
      },
      ag::state(), {}, LOC(201));
}

TEST(StagedFor, FizzBuzzOverRange) {
  agtest::PrintCapture prints;
  int traced_loop = 0, traced_branches = 0;
  auto f = ag::function([&](Tensor n) { fizzbuzz(n, traced_loop, traced_branches); }, interpreted());
  f(Tensor(5));
  EXPECT_EQ(prints.text(), "1\n2\nfizz\n4\nbuzz\n");
  f(Tensor(15));
  EXPECT_EQ(traced_loop, 1);
  EXPECT_EQ(traced_branches, 4);
  EXPECT_EQ(prints.lines().size(), 20u);
  EXPECT_EQ(prints.lines().back(), "fizzbuzz\n");
  EXPECT_EQ(f.concrete_functions()[0].graph_text().find("Gather"), std::string::npos)
      << "a range loop computes its element, it does not index the range";
}

TEST(StagedFor, OverTheRowsOfASymbolicTensorWithBreak) {
  auto body = [](Tensor m) {
    Tensor total = ag::zeros({2});
    Tensor ag__break_1 = false;
    ag::for_stmt(
        m, [&] { return ag::not_(ag__break_1); },
        [&](Tensor row) {
          ag::if_stmt(ag::reduce_sum(row) < 0, [&] { ag__break_1 = true; }, [&] { total = total + row; },
                      ag::state(ag__break_1, total), {"ag__break_1", "total"}, LOC(211));
        },
        ag::state(total, ag__break_1), {"total", "ag__break_1"}, LOC(210));
    return total;
  };
  auto f = ag::function(body, {.input_signature = {ag::TensorSpec({-1, 2}, ag::float32)}, .jit_compile = false});
  Tensor m = ag::constant({{1.f, 2.f}, {3.f, 4.f}, {-10.f, 0.f}, {100.f, 100.f}});
  EXPECT_EQ(f(m).to_vector<float>(), (std::vector<float>{4.f, 6.f}));
  EXPECT_EQ(body(m).to_vector<float>(), (std::vector<float>{4.f, 6.f}));
  EXPECT_EQ(f(ag::zeros({0, 2})).to_vector<float>(), (std::vector<float>{0.f, 0.f}));
}

TEST(StagedFor, ConcreteIterableUnrollsAndCountsIterations) {
  agtest::LogCapture logs(static_cast<unsigned>(ag::detail::LogTopic::Trace));
  auto f = ag::function(
      [](Tensor x) {
        Tensor acc = x;
        ag::for_stmt(ag::range(4), ag::no_extra_test, [&](Tensor i) { acc = acc + i; }, ag::state(acc), {"acc"}, LOC(220));
        return acc;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(10)).item<int>(), 16);
  EXPECT_EQ(f.concrete_functions()[0].graph_text().find("While"), std::string::npos);
  EXPECT_EQ(logs.count_containing("4 plain-loop iterations unrolled"), 1u);
}

TEST(StagedFor, TensorArrayAccumulation) {
  // The guide's dynamic_rnn: [batch, time, features] -> per-step running sums.
  auto dynamic_rnn = ag::function(
      [](Tensor input_data, Tensor initial_state) {
        input_data = ag::transpose(input_data, {1, 0, 2});
        const int64_t max_seq_len = input_data.shape()[0];
        ag::TensorArray states(ag::float32, max_seq_len);
        Tensor state = initial_state;
        ag::for_stmt(ag::range(Tensor(max_seq_len)), ag::no_extra_test,
                     [&](Tensor i) {
                       state = input_data[i] + state;
                       states = states.write(i, state);
                     },
                     ag::state(state, states), {"state", "states"}, LOC(230));
        return ag::transpose(states.stack(), {1, 0, 2});
      },
      interpreted());
  Tensor in = ag::random_uniform({2, 3, 4}, ag::float32, 0, 1, 7);
  Tensor out = dynamic_rnn(in, ag::zeros({2, 4}));
  ASSERT_EQ(out.shape(), ag::Shape({2, 3, 4}));
  const auto x = in.to_vector<float>(), y = out.to_vector<float>();
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 4; ++f) {
      float acc = 0;
      for (int t = 0; t < 3; ++t) {
        acc += x[(b * 3 + t) * 4 + f];
        EXPECT_FLOAT_EQ(y[(b * 3 + t) * 4 + f], acc);
      }
    }
}

// A TensorArray with no element shape yet is a loop variable: the first traced write types it
// (list<f32[*]> -> list<f32[2,4]>), and one trace serves every sequence length.
TEST(StagedFor, UntypedTensorArrayInAStagedLoop) {
  auto running_sums = ag::function(
      [](Tensor input_data) {
        input_data = ag::transpose(input_data, {1, 0, 2});
        ag::TensorArray states(ag::float32);
        Tensor state = ag::zeros({2, 4});
        ag::for_stmt(ag::range(ag::shape_of(input_data)[0]), ag::no_extra_test,
                     [&](Tensor i) {
                       state = input_data[i] + state;
                       states = states.write(i, state);
                     },
                     ag::state(state, states), {"state", "states"}, LOC(231));
        return ag::transpose(states.stack(), {1, 0, 2});
      },
      {.input_signature = {ag::TensorSpec({2, -1, 4}, ag::float32)}, .jit_compile = false});
  for (int seq_len : {1, 3, 6}) {
    Tensor in = ag::random_uniform({2, seq_len, 4}, ag::float32, 0, 1, seq_len);
    Tensor out = running_sums(in);
    ASSERT_EQ(out.shape(), ag::Shape({2, seq_len, 4}));
    const auto x = in.to_vector<float>(), y = out.to_vector<float>();
    for (int b = 0; b < 2; ++b)
      for (int f = 0; f < 4; ++f) {
        float acc = 0;
        for (int t = 0; t < seq_len; ++t) {
          acc += x[(b * seq_len + t) * 4 + f];
          EXPECT_FLOAT_EQ(y[(b * seq_len + t) * 4 + f], acc);
        }
      }
  }
  EXPECT_EQ(running_sums.tracing_count(), 1);
  const std::string text = running_sums.get_concrete_function().graph_text();
  EXPECT_NE(text.find("list<f32[*]>"), std::string::npos) << text;
  EXPECT_NE(text.find("While"), std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(ListStack\(%\d+#1\) : f32\[\?,2,4\])"))) << text;
}

// Written in one branch only: the If result takes the written element shape.
TEST(StagedIf, TensorArrayWrittenInOneBranch) {
  auto f = ag::function(
      [](Tensor x) {
        ag::TensorArray ta(ag::int32);
        ag::if_stmt(ag::reduce_sum(x) > 0, [&] { ta = ta.write(0, x); }, [&] {}, ag::state(ta), {"ta"}, LOC(240));
        return ta.stack();
      },
      interpreted());
  EXPECT_EQ(f(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{1, 2}));
  EXPECT_NE(f.concrete_functions()[0].graph_text().find("list<i32[2]>"), std::string::npos)
      << f.concrete_functions()[0].graph_text();
  EXPECT_EQ(f(ag::constant({-1, -2})).shape(), ag::Shape({0, 2})) << f.concrete_functions()[0].graph_text();
}

TEST(StagedFor, ReadingAnUntypedTensorArrayWhileTracingIsAnError) {
  auto f = ag::function(
      [](Tensor n) {
        ag::TensorArray ta(ag::float32);
        Tensor last = 0.0f;
        ag::for_stmt(ag::range(n), ag::no_extra_test, [&](Tensor i) { last = ta.read(i); }, ag::state(last),
                     {"last"}, LOC(250));
        return last;
      },
      interpreted());
  AG_EXPECT_ERROR(ag::ValueError, f(Tensor(3)), "TensorArray", "no element shape yet", "written");
  // Writing an element of another rank than the first write is a shape error while tracing.
  auto g = ag::function(
      [](Tensor n) {
        ag::TensorArray ta(ag::float32);
        ta = ta.write(0, ag::zeros({2}));
        ag::for_stmt(ag::range(n), ag::no_extra_test, [&](Tensor i) { ta = ta.write(i, ag::zeros({2, 2})); },
                     ag::state(ta), {"ta"}, LOC(260));
        return ta.stack();
      },
      interpreted());
  AG_EXPECT_ERROR(ag::ValueError, g(Tensor(3)), "TensorArray::write", "[2]", "[2,2]");
}

TEST(StagedControlFlow, CompositeStateMembersAndElements) {
  struct Cell {
    Tensor h, c;
  };
  auto f = ag::function(
      [](Tensor n) {
        Cell s{Tensor(1), Tensor(0)};
        Tensor arr[2] = {Tensor(0), Tensor(0)};
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         s.h = s.h * 2;
                         arr[1] = arr[1] + s.h;
                         n -= 1;
                       },
                       ag::state(s.h, arr[1], n), {"s.h", "arr[1]", "n"}, LOC(240));
        return s.h + arr[1];
      },
      interpreted());
  EXPECT_EQ(f(Tensor(3)).item<int>(), 8 + (2 + 4 + 8));
}

TEST(StagedLogical, AndOrAreLazyEagerlyAndStaged) {
  agtest::PrintCapture prints;
  auto rhs = [](Tensor v) {
    ag::print("rhs evaluated");
    return v > 0;
  };
  auto body = [&](Tensor a, Tensor b) {
    Tensor r = 0;
    ag::if_stmt(ag::and_(a > 0, [&] { return rhs(b); }), [&] { r = 1; }, [] {}, ag::state(r), {"r"}, LOC(250));
    ag::if_stmt(ag::or_(a > 0, [&] { return rhs(b); }), [&] { r = r + 10; }, [] {}, ag::state(r), {"r"}, LOC(251));
    return r;
  };
  EXPECT_EQ(body(Tensor(-1), Tensor(1)).item<int>(), 10);
  EXPECT_EQ(prints.lines().size(), 1u);  // and_: skipped; or_: evaluated
  auto f = ag::function(body, interpreted());
  EXPECT_EQ(f(Tensor(1), Tensor(1)).item<int>(), 11);
  EXPECT_EQ(prints.lines().size(), 2u);  // and_ needed it, or_ did not
  EXPECT_EQ(f(Tensor(-1), Tensor(-1)).item<int>(), 0);
  EXPECT_EQ(prints.lines().size(), 3u);  // and_ skipped it, or_ needed it
  EXPECT_TRUE(ag::not_(false));
  EXPECT_FALSE(ag::and_(true, [] { return false; }));
}

TEST(StagedLogical, IfExpAndFunctionalForms) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor sign = ag::if_exp(x > 0, [&] { return Tensor(1); }, [&] { return Tensor(-1); }, LOC(260));
        Tensor picked = ag::cond(x > 0, [&] { return x * 2; }, [&] { return x * 3; });
        auto [i, acc] = ag::while_loop([](Tensor i, Tensor) { return i < 4; },
                                       [](Tensor i, Tensor acc) { return std::tuple{i + 1, acc + i}; },
                                       std::tuple{Tensor(0), Tensor(0)});
        return sign * 1000 + picked + acc * 0 + i;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(5)).item<int>(), 1000 + 10 + 4);
  EXPECT_EQ(f(Tensor(-5)).item<int>(), -1000 - 15 + 4);
}

TEST(StagedLogical, ConditionalExpressionBranchesMustAgree) {
  auto f = ag::function(
      [](Tensor x) { return ag::if_exp(x > 0, [&] { return Tensor(1); }, [&] { return Tensor(2.0); }, LOC(270)); },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(1)); }, {"i32[]", "f64[]", "cf.cpp:270"});
}

}  // namespace
