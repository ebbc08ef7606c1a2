// Staged if, as ag-rewrite emits it (docs/operators.md): results agree eagerly and traced;
// the staging rules raise ConversionErrors naming the variable and the line. Also the lazy
// && / || operators, conditional expressions and composite state.
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
