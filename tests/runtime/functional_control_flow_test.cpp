// ag::while_loop and ag::cond (tf.while_loop, tf.cond): native loops and branches eagerly;
// While/If nodes whenever a trace is active, also for concrete starting values or predicates.
#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

// Sum of 0..limit-1 with concrete starting values: nothing symbolic feeds the loop's variables.
Tensor triangle(Tensor limit) {
  auto [i, acc] = ag::while_loop([&](Tensor i, Tensor) { return i < limit; },
                                 [](Tensor i, Tensor acc) { return std::tuple{i + 1, acc + i}; },
                                 std::tuple{Tensor(0), Tensor(0)});
  return acc * 100 + i;
}

TEST(FunctionalWhileLoop, StagedForConcreteStartingValues) {
  int body_traces = 0;
  auto counted = [&](Tensor x) {
    auto [n] = ag::while_loop([](Tensor n) { return n < 1000; },
                              [&](Tensor n) {
                                ++body_traces;  // a plain C++ side effect: runs only while tracing
                                return n * 2;
                              },
                              std::tuple{Tensor(1)});
    return n + x;
  };
  auto f = ag::function(counted, interpreted());
  EXPECT_EQ(f(Tensor(0)).item<int>(), 1024);
  EXPECT_EQ(body_traces, 1);  // traced once into a While body, not unrolled ten times
  const std::string g = f.concrete_functions()[0].graph_text();
  EXPECT_NE(g.find("While("), std::string::npos) << g;

  auto t = ag::function(triangle, interpreted());
  for (int limit : {0, 1, 7}) EXPECT_EQ(t(Tensor(limit)).item<int>(), triangle(Tensor(limit)).item<int>()) << limit;
  EXPECT_EQ(t.tracing_count(), 1);
  EXPECT_NE(t.concrete_functions()[0].graph_text().find("While("), std::string::npos);
}

TEST(FunctionalWhileLoop, EagerRunsNatively) {
  EXPECT_EQ(triangle(Tensor(5)).item<int>(), 10 * 100 + 5);
  int body_runs = 0;
  auto [n] = ag::while_loop([](Tensor n) { return n < 100; },
                            [&](Tensor n) {
                              ++body_runs;
                              return n * 3;
                            },
                            std::tuple{Tensor(1)});
  EXPECT_EQ(n.item<int>(), 243);
  EXPECT_EQ(body_runs, 5);
}

TEST(FunctionalWhileLoop, ErrorsNameTheLoopVariableByPosition) {
  auto f = ag::function(
      [](Tensor x) {
        auto [i, y] = ag::while_loop([](Tensor i, Tensor) { return i < 3; },
                                     [](Tensor i, Tensor y) { return std::tuple{i + 1, ag::cast(y, ag::float64)}; },
                                     std::tuple{Tensor(0), x}, AG_SOURCE_LOC("loops.cpp", 7));
        return y;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(1.f)); }, {"'loop_vars[1]' is f32[]", "but f64[] after an iteration", "loops.cpp:7"});
}

TEST(FunctionalCond, StagedForAConcretePredicateThenFolded) {
  int traced_then = 0, traced_else = 0;
  auto f = ag::function(
      [&](Tensor x) {
        const Tensor flag(true);  // concrete while tracing
        return ag::cond(
            flag, [&] { return ++traced_then, x + 1; }, [&] { return ++traced_else, x - 1; });
      },
      interpreted());
  EXPECT_EQ(f(Tensor(10)).item<int>(), 11);
  EXPECT_EQ(traced_then, 1);  // both branches traced, as tf.cond does in a graph
  EXPECT_EQ(traced_else, 1);
  const std::string g = f.concrete_functions()[0].graph_text();
  EXPECT_EQ(g.find("If("), std::string::npos) << g;  // a constant predicate's If is folded
  EXPECT_EQ(g.find("Sub("), std::string::npos) << g;

  // The branches must agree even when the predicate is known.
  auto bad = ag::function(
      [](Tensor x) { return ag::cond(Tensor(false), [&] { return x; }, [&] { return ag::cast(x, ag::float64); }); },
      interpreted());
  expect_error<ag::ConversionError>([&] { bad(Tensor(1)); }, {"i32[]", "f64[]"});

  // Eagerly only the taken branch runs.
  int runs = 0;
  EXPECT_EQ(ag::cond(Tensor(false), [&] { return ++runs, Tensor(1); }, [&] { return Tensor(2); }).item<int>(), 2);
  EXPECT_EQ(runs, 0);
}

TEST(FunctionalCond, TupleResultsStagedAndEager) {
  auto fn = [](Tensor x) {
    auto [a, b] = ag::cond(x > 0, [&] { return std::tuple{x * 2, x + 1}; }, [&] { return std::tuple{x * 3, x - 1}; });
    return a * 10 + b;
  };
  auto f = ag::function(fn, interpreted());
  for (int v : {4, -4}) EXPECT_EQ(f(Tensor(v)).item<int>(), fn(Tensor(v)).item<int>()) << v;
}

}  // namespace
