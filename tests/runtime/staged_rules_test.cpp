// Staging rules and loop tracing details not covered by staged_{if,while,for}_test.cpp: flags
// of break/return in plain C++ loops, non-tensor locals and globals in staged loops, how many
// times a loop body is traced, set_loop_options errors, ConcreteFunctions called while tracing.
#include <vector>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

#define LOC(line) AG_SOURCE_LOC("rules.cpp", line)

// for (int k = 0; k < 5; ++k) { if (x > k) break; ... }   as ag-rewrite lowers it.
Tensor first_not_below(Tensor x) {
  Tensor found = -1;
  Tensor ag__break_1 = false;
  for (int k = 0; k < 5 && ag::loop_flag(ag::not_(ag__break_1), LOC(300)); ++k) {
    ag::if_stmt(x < k, [&] { found = Tensor(k), ag__break_1 = true; }, [] {}, ag::state(found, ag__break_1),
                {"found", "ag__break_1"}, LOC(301));
  }
  return found;
}

TEST(StagedRules, TensorDependentBreakInAPlainLoopIsAConversionError) {
  EXPECT_EQ(first_not_below(Tensor(2)).item<int>(), 3);  // eagerly the flag is a concrete bool
  auto f = ag::function(first_not_below, interpreted());
  expect_error<ag::ConversionError>(
      [&] { f(Tensor(2)); },
      {"a tensor-dependent break or return inside a plain C++ loop at rules.cpp:300: the loop's own condition is a "
       "C++ value, so the loop runs while tracing and cannot stop on a tensor's value; make the loop a tensor loop"});
}

TEST(StagedRules, TensorDependentBreakInALoopOverAContainerIsAConversionError) {
  const std::vector<int> items = {1, 2, 3};
  auto body = [&](Tensor x) {
    Tensor sum = 0;
    Tensor ag__break_1 = false;
    ag::for_stmt(
        items, [&] { return ag::not_(ag__break_1); },
        [&](int v) {
          ag::if_stmt(sum + v > x, [&] { ag__break_1 = true; }, [&] { sum = sum + v; }, ag::state(ag__break_1, sum),
                      {"ag__break_1", "sum"}, LOC(311));
        },
        ag::state(sum, ag__break_1), {"sum", "ag__break_1"}, LOC(310));
    return sum;
  };
  EXPECT_EQ(body(Tensor(4)).item<int>(), 3);
  auto f = ag::function(body, interpreted());
  expect_error<ag::ConversionError>(
      [&] { f(Tensor(4)); },
      {"a tensor-dependent break inside a loop over a C++ container at rules.cpp:310: the loop runs while tracing "
       "and cannot stop on a tensor's value; loop over a tensor (or ag::range) instead"});
}

int g_plain_counter = 0;
Tensor g_global_acc = 0;

TEST(StagedRules, NonTensorLocalsAndGlobalsInStagedWhile) {
  auto local = ag::function(
      [](Tensor n) {
        int steps = 0;
        Tensor i = 0;
        ag::while_stmt([&] { return i < n; }, [&] { i += 1, ++steps; }, ag::state(i, steps), {"i", "steps"}, LOC(320));
        return i + steps;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { local(Tensor(3)); },
                                    {"'steps' (an int) is modified inside a tensor-dependent while loop at rules.cpp:320",
                                     "Make it an ag::Tensor"});
  auto global = ag::function(
      [](Tensor n) {
        Tensor i = 0;
        ag::while_stmt([&] { return i < n; }, [&] { i += 1, g_global_acc = g_global_acc + i; },
                       ag::state(i, g_global_acc), {"i", "::g_global_acc"}, LOC(321));
        return i;
      },
      interpreted());
  expect_error<ag::ConversionError>(
      [&] { global(Tensor(3)); },
      {"the global variable 'g_global_acc' is modified inside a tensor-dependent while loop at rules.cpp:321",
       "ag::Variable"});
  auto plain_global = ag::function(
      [](Tensor n) {
        Tensor i = 0;
        ag::while_stmt([&] { return i < n; }, [&] { i += 1, ++g_plain_counter; }, ag::state(i, g_plain_counter),
                       {"i", "::g_plain_counter"}, LOC(322));
        return i;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { plain_global(Tensor(3)); }, {"global variable 'g_plain_counter'", "rules.cpp:322"});
}

TEST(StagedRules, NonTensorLocalsAndGlobalsInStagedFor) {
  auto body = [](Tensor xs) {
    std::vector<Tensor> seen;
    Tensor total = 0.f;
    ag::for_stmt(xs, ag::no_extra_test, [&](Tensor x) { seen.push_back(x), total = total + x; },
                 ag::state(total, seen), {"total", "seen"}, LOC(330));
    return total;
  };
  EXPECT_EQ(body(ag::constant({1.f, 2.f})).item<float>(), 3.f);  // eagerly plain C++
  auto f = ag::function(body, {.input_signature = {ag::TensorSpec({-1}, ag::float32)}, .jit_compile = false});
  // A carried vector may change its elements, not its length (the body would push symbolic
  // tensors that outlive the trace).
  expect_error<ag::ConversionError>([&] { f(ag::constant({1.f, 2.f})); },
                                    {"'seen' (a std::vector<ag::Tensor>) changed its length from 0 to 1",
                                     "inside the tensor-dependent for loop at rules.cpp:330", "ag::TensorArray"});
  auto global = ag::function(
      [](Tensor xs) {
        ag::for_stmt(xs, ag::no_extra_test, [&](Tensor x) { g_global_acc = x; }, ag::state(g_global_acc),
                     {"::g_global_acc"}, LOC(331));
        return xs;
      },
      {.input_signature = {ag::TensorSpec({-1}, ag::float32)}, .jit_compile = false});
  expect_error<ag::ConversionError>([&] { global(ag::constant({1.f})); },
                                    {"the global variable 'g_global_acc' is modified inside a tensor-dependent for loop",
                                     "rules.cpp:331"});
}

// A loop whose carried shape grows: its body is traced again with the generalized shape.
TEST(StagedRules, LoopShapeInferenceTracesTheBodyTwice) {
  int body_traces = 0;
  auto make = [&](bool grows) {
    return ag::function(
        [&, grows](Tensor n) {
          Tensor xs = ag::constant({0});
          Tensor i = 0;
          ag::while_stmt([&] { return i < n; },
                         [&] {
                           ++body_traces;  // plain C++: counts traces of the body
                           xs = grows ? ag::concat({xs, ag::reshape(i, {1})}, 0) : xs + i;
                           i += 1;
                         },
                         ag::state(xs, i), {"xs", "i"}, LOC(340));
          return xs;
        },
        interpreted());
  };
  auto growing = make(true);
  EXPECT_EQ(growing(Tensor(3)).to_vector<int>(), (std::vector<int>{0, 0, 1, 2}));
  EXPECT_EQ(body_traces, 2);  // once with xs: [1], again with xs: [?]
  body_traces = 0;
  auto fixed = make(false);
  EXPECT_EQ(fixed(Tensor(3)).to_vector<int>(), (std::vector<int>{3}));
  EXPECT_EQ(body_traces, 1);  // the shape held: one trace
}

TEST(StagedRules, PinnedShapeInvariantThatDoesNotFitIsAConversionError) {
  auto f = ag::function(
      [](Tensor n) {
        Tensor xs = ag::zeros({1, 2});
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         ag::set_loop_options({.shape_invariants = {{&xs, {-1, 3}}}});
                         xs = ag::concat({xs, ag::ones({1, 2})}, 0);
                         n -= 1;
                       },
                       ag::state(xs, n), {"xs", "n"}, LOC(350));
        return xs;
      },
      interpreted());
  expect_error<ag::ConversionError>(
      [&] { f(Tensor(2)); },
      {"the shape invariant [?,3] of 'xs' does not fit its shape [2,2] after an iteration of the while loop at "
       "rules.cpp:350"});
}

TEST(StagedRules, ConcreteFunctionCalledWhileTracingIsInlined) {
  auto inner = ag::function([](Tensor x) { return ag::tanh(x) * 2.f; }, {.jit_compile = false, .name = "inner"});
  auto cf = inner.get_concrete_function(ag::TensorSpec({-1}, ag::float32));
  EXPECT_EQ(inner.tracing_count(), 1);
  auto outer = ag::function([&](Tensor x) { return cf(x + 1.f) - 1.f; }, {.jit_compile = false, .name = "outer"});
  const Tensor x = ag::constant({0.f, 0.5f, -2.f});
  const Tensor got = outer(x);
  const Tensor expected = ag::tanh(x + 1.f) * 2.f - 1.f;
  EXPECT_EQ(got.to_vector<float>(), expected.to_vector<float>());
  EXPECT_EQ(inner.tracing_count(), 1);  // the concrete function's graph was reused, not retraced
  const std::string text = outer.concrete_functions()[0].graph_text();
  EXPECT_NE(text.find("Tanh("), std::string::npos) << text;  // the inner ops are in the outer graph
  EXPECT_EQ(outer.concrete_functions()[0].graph().params.size(), 1u);
  // Its argument checks still apply while tracing.
  auto wrong = ag::function([&](Tensor x) { return cf(ag::cast(x, ag::float64)); }, {.jit_compile = false});
  expect_error<ag::TypeError>([&] { wrong(x); }, {"dtype float64", "expected float32"});
}

}  // namespace
