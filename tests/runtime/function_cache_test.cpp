// ag::function's per-signature cache: when it traces, what it matches, how it is bounded.
#include <atomic>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

std::atomic<int> g_traces{0};

Tensor double_it(Tensor a) {
  ++g_traces;  // a C++ side effect: happens only while tracing
  return a + a;
}

TEST(FunctionCache, TracesOncePerSignature) {
  g_traces = 0;
  auto f = ag::function(double_it, interpreted());
  EXPECT_EQ(f(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{2, 4}));
  EXPECT_EQ(f(ag::constant({5, 6})).to_vector<int>(), (std::vector<int>{10, 12}));
  EXPECT_EQ(g_traces, 1);
  EXPECT_EQ(f.tracing_count(), 1);
  f(ag::constant({1.5f, 2.f}));  // new dtype
  EXPECT_EQ(f.tracing_count(), 2);
  f(ag::constant({1, 2, 3}));  // new dim
  EXPECT_EQ(f.tracing_count(), 3);
  f(ag::constant({{1, 2}}));  // new rank
  EXPECT_EQ(f.tracing_count(), 4);
  f(ag::constant({7, 8}));  // seen before
  EXPECT_EQ(f.tracing_count(), 4);
  EXPECT_EQ(g_traces, 4);
  EXPECT_EQ(f.stats().traces, 4);
  EXPECT_GE(f.stats().memory_hits, 2);
}

TEST(FunctionCache, PlainScalarsArePartOfTheSignatureByValue) {
  auto f = ag::function([](Tensor x, int k, bool flip) { return flip ? x * k : x + k; }, interpreted());
  EXPECT_EQ(f(Tensor(10), 2, false).item<int>(), 12);
  EXPECT_EQ(f(Tensor(10), 2, true).item<int>(), 20);
  EXPECT_EQ(f(Tensor(10), 3, false).item<int>(), 13);
  EXPECT_EQ(f(Tensor(11), 3, false).item<int>(), 14);
  EXPECT_EQ(f.tracing_count(), 3);
}

TEST(FunctionCache, StringsAndEnumsAreValues) {
  enum class Act { relu, square };
  auto f = ag::function(
      [](Tensor x, std::string mode, Act act) {
        Tensor y = mode == "neg" ? -x : x;
        return act == Act::relu ? ag::relu(y) : ag::square(y);
      },
      interpreted());
  EXPECT_EQ(f(Tensor(3.f), "neg", Act::relu).item<float>(), 0.f);
  EXPECT_EQ(f(Tensor(3.f), "pos", Act::relu).item<float>(), 3.f);
  EXPECT_EQ(f(Tensor(3.f), "neg", Act::square).item<float>(), 9.f);
  EXPECT_EQ(f(Tensor(4.f), "neg", Act::square).item<float>(), 16.f);
  EXPECT_EQ(f.tracing_count(), 3);
}

TEST(FunctionCache, VariablesAreMatchedByDtypeAndShape) {
  ag::Variable v1(Tensor(1.f)), v2(Tensor(1.f)), v3(ag::constant({1.f, 2.f}));
  auto f = ag::function([](Tensor x, ag::Variable& v) { return x + v.value(); }, interpreted());
  EXPECT_EQ(f(Tensor(1.f), v1).item<float>(), 2.f);
  v1.assign(5.f);
  EXPECT_EQ(f(Tensor(1.f), v1).item<float>(), 6.f);  // read by reference, no retrace
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f(Tensor(1.f), v2).item<float>(), 2.f);  // another variable of the same spec: the same trace
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f(Tensor(1.f), v3).to_vector<float>(), (std::vector<float>{2.f, 3.f}));  // another shape
  EXPECT_EQ(f.tracing_count(), 2);
}

Tensor next_collatz(Tensor x) { return ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1); }

TEST(FunctionCache, InputSignatureServesManyShapesAndRejectsOthers) {
  auto f = ag::function(next_collatz, {.input_signature = {ag::TensorSpec({-1}, ag::int32, "x")}, .jit_compile = false});
  EXPECT_EQ(f(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{4, 1}));
  EXPECT_EQ(f(ag::constant({1, 2, 3, 4, 5})).to_vector<int>(), (std::vector<int>{4, 1, 10, 2, 16}));
  EXPECT_EQ(f.tracing_count(), 1);
  expect_error<ag::ValueError>([&] { f(ag::constant({{1, 2}, {3, 4}})); },
                               {"argument 0", "shape (2, 2)", "TensorSpec(shape=(None,), dtype=int32, name='x')"});
  expect_error<ag::TypeError>([&] { f(ag::constant({1.0, 2.0})); }, {"argument 0", "float64", "int32"});
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(FunctionCache, InputSignatureNeedsOneSpecPerTensorParameter) {
  auto make = [] {
    return ag::function([](Tensor a, int k, Tensor b) { return a * k + b; },
                        {.input_signature = {ag::TensorSpec({-1}, ag::int32)}, .jit_compile = false, .name = "f2"});
  };
  expect_error<ag::ValueError>(make, {"'f2'", "1 TensorSpec", "2 ag::Tensor parameter"});
  auto ok = ag::function([](Tensor a, int k, Tensor b) { return a * k + b; },
                         {.input_signature = {ag::TensorSpec({-1}, ag::int32), ag::TensorSpec({}, ag::int32)},
                          .jit_compile = false});
  EXPECT_EQ(ok(ag::constant({1, 2}), 3, Tensor(1)).to_vector<int>(), (std::vector<int>{4, 7}));
}

TEST(FunctionCache, UnknownRankSpecTracesOncePerRank) {
  auto f = ag::function([](Tensor x) { return x * 2; },
                        {.input_signature = {ag::TensorSpec::unknown_rank(ag::float32)}, .jit_compile = false});
  f(ag::constant({1.f}));
  f(ag::constant({1.f, 2.f, 3.f}));
  f(ag::constant({{1.f}, {2.f}}));
  f(ag::constant({{1.f, 2.f}}));
  EXPECT_EQ(f.tracing_count(), 2);
}

// Returns a value that reveals which concrete function ran: its static leading dim.
Tensor static_dim(Tensor x) { return ag::reduce_sum(x) * 0 + Tensor(static_cast<float>(x.shape()[0])); }

TEST(FunctionCache, MostSpecificConcreteFunctionWins) {
  auto f = ag::function(static_dim, interpreted());
  f.get_concrete_function(ag::TensorSpec({-1, -1}, ag::float32));
  EXPECT_EQ(f(ag::zeros({2, 3})).item<float>(), -1.f);
  f.get_concrete_function(ag::TensorSpec({-1, 3}, ag::float32));
  f.get_concrete_function(ag::TensorSpec({2, 3}, ag::float32));
  EXPECT_EQ(f(ag::zeros({2, 3})).item<float>(), 2.f);   // [2,3] before [-1,3] before [-1,-1]
  EXPECT_EQ(f(ag::zeros({5, 3})).item<float>(), -1.f);  // [-1,3]: its dim 0 is unknown too
  EXPECT_EQ(f(ag::zeros({5, 4})).item<float>(), -1.f);
  EXPECT_EQ(f.tracing_count(), 3);
}

TEST(FunctionCache, GetConcreteFunctionTracesWithoutRunning) {
  agtest::PrintCapture prints;
  g_traces = 0;
  auto f = ag::function(
      [](Tensor x) {
        ++g_traces;
        ag::print("running with", x);
        return x * 2;
      },
      interpreted());
  auto cf = f.get_concrete_function(ag::TensorSpec({3}, ag::int32));
  EXPECT_EQ(g_traces, 1);
  EXPECT_TRUE(prints.lines().empty());
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(cf(ag::constant({1, 2, 3})).to_vector<int>(), (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(prints.lines().size(), 1u);
  f(ag::constant({4, 5, 6}));  // the concrete function is in the Function's cache
  EXPECT_EQ(f.tracing_count(), 1);
  auto cf2 = f.get_concrete_function(ag::constant({9, 9, 9}));  // an example argument
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(cf2.signature(), cf.signature());
}

TEST(FunctionCache, GetConcreteFunctionWithoutArgumentsUsesTheInputSignature) {
  auto opts = interpreted();
  opts.input_signature = {ag::TensorSpec({-1}, ag::float32), ag::TensorSpec({}, ag::float32)};
  auto f = ag::function([](Tensor x, Tensor y) { return x * y; }, opts);
  auto cf = f.get_concrete_function();
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(cf(ag::constant({1.f, 2.f}), Tensor(3.f)).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(f.get_concrete_function().signature(), cf.signature());
  EXPECT_EQ(f.tracing_count(), 1);

  auto no_signature = ag::function([](Tensor x) { return x; }, interpreted());
  AG_EXPECT_ERROR(ag::ValueError, no_signature.get_concrete_function(), "get_concrete_function()", "input_signature");
  auto plain_param = interpreted();
  plain_param.input_signature = {ag::TensorSpec({}, ag::float32)};
  auto with_int = ag::function([](Tensor x, int k) { return x * float(k); }, plain_param);
  AG_EXPECT_ERROR(ag::ValueError, with_int.get_concrete_function(), "not tensors", "pass a value");
}

TEST(FunctionCache, ConcreteFunctionRejectsIncompatibleArguments) {
  auto pow_fn = ag::function([](Tensor a, int b) { return ag::pow(a, Tensor(static_cast<float>(b))); }, interpreted());
  auto square = pow_fn.get_concrete_function(ag::TensorSpec({-1}, ag::float32), 2);
  EXPECT_EQ(square(ag::constant({10.f}), 2).item<float>(), 100.f);
  expect_error<ag::TypeError>([&] { square(ag::constant({10.f}), 3); }, {"traced with the value 2", "got 3"});
  expect_error<ag::TypeError>([&] { square(ag::constant({10}), 2); }, {"dtype int32", "expected float32"});
  expect_error<ag::ValueError>([&] { square(ag::constant({{10.f}}), 2); }, {"shape (1, 1)", "expected (None,)"});
}

// TensorFlow's `square = pow.get_concrete_function(tf.TensorSpec([], tf.float32), 2)` then
// `square(tf.constant(10.0))`: the plain arguments may be left out of a concrete call.
TEST(FunctionCache, ConcreteFunctionCalledWithoutItsPlainArguments) {
  auto pow_fn = ag::function([](Tensor a, int b) { return ag::pow(a, Tensor(static_cast<float>(b))); }, interpreted());
  auto square = pow_fn.get_concrete_function(ag::TensorSpec({}, ag::float32), 2);
  auto cube = pow_fn.get_concrete_function(ag::TensorSpec({}, ag::float32), 3);
  EXPECT_EQ(square(Tensor(10.f)).item<float>(), 100.f);
  EXPECT_EQ(cube(Tensor(10.f)).item<float>(), 1000.f);
  EXPECT_EQ(square(Tensor(10.f), 2).item<float>(), 100.f);  // the same value may still be given
  expect_error<ag::TypeError>([&] { square(Tensor(10.f), 3); }, {"traced with the value 2", "got 3"});
  expect_error<ag::TypeError>([&] { square(Tensor(10)); }, {"dtype int32", "expected float32"});
  EXPECT_EQ(pow_fn.tracing_count(), 2);

  // Plain parameters anywhere, a container of numbers among them; tensors keep their order.
  auto mixed = ag::function(
      [](int k, Tensor x, std::vector<float> ws, Tensor y) { return x * ws[static_cast<size_t>(k)] - y; },
      interpreted());
  const auto c = mixed.get_concrete_function(1, ag::TensorSpec({2}, ag::float32), std::vector<float>{2.f, 5.f},
                                             ag::TensorSpec({2}, ag::float32));
  EXPECT_EQ(c(ag::constant({1.f, 2.f}), ag::constant({1.f, 1.f})).to_vector<float>(), (std::vector<float>{4.f, 9.f}));
  EXPECT_EQ(mixed.tracing_count(), 1);

  // Called while tracing another Function, it inlines with its traced values.
  auto outer = ag::function([&](Tensor x) { return square(x) + cube(x); }, interpreted());
  EXPECT_EQ(outer(Tensor(2.f)).item<float>(), 12.f);
  EXPECT_EQ(pow_fn.tracing_count(), 2);
}

TEST(FunctionCache, PrettyPrintedSignatures) {
  auto f = ag::function(double_it, {.jit_compile = false, .name = "double"});
  f(Tensor(1));
  f(Tensor(1.5));
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("double(arg0: TensorSpec(shape=(), dtype=int32)) -> TensorSpec(shape=(), dtype=int32)"),
            std::string::npos)
      << sigs;
  EXPECT_NE(sigs.find("double(arg0: TensorSpec(shape=(), dtype=float64)) -> TensorSpec(shape=(), dtype=float64)"),
            std::string::npos)
      << sigs;
  EXPECT_EQ(f.concrete_functions().size(), 2u);
}

TEST(FunctionCache, ParamNamesNameTheArgumentsOfALambda) {
  auto f = ag::function([](Tensor x, int power) { return x * static_cast<float>(power); },
                        {.input_signature = {ag::TensorSpec({-1}, ag::float32)}, .jit_compile = false, .name = "scale",
                         .param_names = {"x", "power"}});
  f(ag::constant({1.f, 2.f}), 3);
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("scale(x: TensorSpec(shape=(None,), dtype=float32), power: int = 3)"), std::string::npos) << sigs;
  expect_error<ag::TypeError>([&] { f(ag::constant({1, 2}), 3); }, {"argument 0 'x'", "dtype int32"});
  expect_error<ag::ValueError>(
      [] { ag::function([](Tensor x, Tensor y) { return x + y; }, {.name = "add", .param_names = {"x"}}); },
      {"'add'", "param_names has 1 name for 2 parameters"});
}

TEST(FunctionCache, ReduceRetracingGeneralizesShapes) {
  auto f = ag::function([](Tensor x) { return x + 1; }, {.reduce_retracing = true, .jit_compile = false});
  for (int n = 1; n <= 20; ++n) {
    Tensor out = f(ag::zeros({n}));
    ASSERT_EQ(out.shape(), ag::Shape({n}));
  }
  EXPECT_EQ(f.tracing_count(), 2);  // [1], then [?] serves the rest
}

TEST(FunctionCache, ReduceRetracingRelaxesAgainstTheTraceOfTheSameRank) {
  // TensorFlow's test: shapes [], [1], [2], [3] leave two traces, [] and [None]. Relaxing each new call
  // against the first (scalar) trace would never find a common shape and trace every call.
  auto f = ag::function([](Tensor x) { return x * 2; }, {.reduce_retracing = true, .jit_compile = false});
  f(ag::constant(1.f));
  for (int n = 1; n <= 3; ++n) EXPECT_EQ(f(ag::ones({n})).to_vector<float>(), std::vector<float>(n, 2.f));
  EXPECT_EQ(f.tracing_count(), 3);  // [], [1], then [None]
  EXPECT_EQ(f(ag::ones({7})).to_vector<float>(), std::vector<float>(7, 2.f));
  EXPECT_EQ(f.tracing_count(), 3);
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("shape=()"), std::string::npos) << sigs;
  EXPECT_NE(sigs.find("shape=(None,)"), std::string::npos) << sigs;
}

TEST(FunctionCache, ReduceRetracingRelaxesAgainstTheTraceThatKeepsMostDims) {
  auto f = ag::function([](Tensor x) { return x + 1; }, {.reduce_retracing = true, .jit_compile = false});
  f(ag::zeros({4, 3}));
  f(ag::zeros({4, 5}));  // relaxes against [4, 3]: [4, None]
  f(ag::zeros({6, 3}));  // against [4, 3] keeps the 3, against [4, None] nothing: [None, 3]
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("shape=(4, None)"), std::string::npos) << sigs;
  EXPECT_NE(sigs.find("shape=(None, 3)"), std::string::npos) << sigs;
  EXPECT_EQ(sigs.find("shape=(None, None)"), std::string::npos) << sigs;
  f(ag::zeros({8, 3}));  // served by [None, 3]
  f(ag::zeros({4, 9}));  // served by [4, None]
  EXPECT_EQ(f.tracing_count(), 3);
}

TEST(FunctionCache, LeastRecentlyUsedEvictionAndEvict) {
  auto f = ag::function([](Tensor x) { return x * 2; }, {.jit_compile = false, .max_cached = 2});
  f(ag::zeros({1}));
  f(ag::zeros({2}));
  f(ag::zeros({1}));  // [1] is now more recent than [2]
  f(ag::zeros({3}));  // evicts [2]
  EXPECT_EQ(f.stats().evictions, 1);
  EXPECT_EQ(f.concrete_functions().size(), 2u);
  f(ag::zeros({1}));
  // tracing_count() counts the traces the Function holds (TensorFlow's
  // experimental_get_tracing_count); stats().traces every trace made.
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(f.stats().traces, 3);
  f(ag::zeros({2}));  // traced again
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(f.stats().traces, 4);
  f.evict();
  EXPECT_TRUE(f.concrete_functions().empty());
  EXPECT_EQ(f.tracing_count(), 0);
  f(ag::zeros({2}));
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f.stats().traces, 5);
}

TEST(FunctionCache, EvictedConcreteFunctionStaysUsableWhileHeld) {
  auto f = ag::function([](Tensor x) { return x * 3; }, {.jit_compile = false, .max_cached = 1});
  auto cf = f.get_concrete_function(ag::TensorSpec({2}, ag::int32));
  f(ag::zeros({5}, ag::int32));  // evicts cf's entry
  EXPECT_EQ(cf(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{3, 6}));
}

TEST(FunctionCache, MaxTracesPolicies) {
  auto err = ag::function([](Tensor x) { return x; }, {.jit_compile = false, .max_traces = 2});
  err(ag::zeros({1}));
  err(ag::zeros({2}));
  expect_error<ag::ValueError>([&] { err(ag::zeros({3})); }, {"max_traces=2", "-> [3]"});

  agtest::LogCapture logs;
  auto warn = ag::function([](Tensor x) { return x; },
                           {.jit_compile = false, .max_traces = 1, .on_max_traces = ag::TracePolicy::warn});
  warn(ag::zeros({1}));
  warn(ag::zeros({2}));
  warn(ag::zeros({3}));
  EXPECT_EQ(warn.tracing_count(), 3);
  EXPECT_EQ(logs.count_containing("max_traces=1"), 1u);

  auto gen = ag::function([](Tensor x) { return x + 1; },
                          {.jit_compile = false, .max_traces = 1, .on_max_traces = ag::TracePolicy::generalize});
  gen(ag::zeros({1, 2}));
  for (int n = 2; n < 6; ++n) EXPECT_EQ(gen(ag::zeros({n, n})).shape(), ag::Shape({n, n}));
  EXPECT_EQ(gen.tracing_count(), 2);
}

TEST(FunctionCache, RetracingWarningFiresAtMostTwice) {
  agtest::LogCapture logs;
  auto f = ag::function([](Tensor x) { return x; }, interpreted());
  for (int n = 1; n <= 30; ++n) f(ag::zeros({n}));
  EXPECT_EQ(logs.count_containing("traced a new graph"), 2u);
  const auto lines = logs.lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("5 of the last 5 calls"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("input_signature"), std::string::npos);
}

TEST(FunctionCache, NoRetracingWarningWhenCallsHit) {
  agtest::LogCapture logs;
  auto f = ag::function([](Tensor x) { return x; }, interpreted());
  for (int n = 1; n <= 8; ++n) {
    f(ag::zeros({n}));
    for (int k = 0; k < 3; ++k) f(ag::zeros({n}));  // 3 hits after each trace
  }
  EXPECT_EQ(logs.count_containing("traced a new graph"), 0u);
}

TEST(FunctionCache, RetraceLogNamesTheDifference) {
  agtest::LogCapture logs(static_cast<unsigned>(ag::detail::LogTopic::Retrace));
  auto f = ag::function([](Tensor x, int k) { return x * k; }, {.jit_compile = false, .name = "scale"});
  f(ag::zeros({1, 100, 100, 3}), 2);
  f(ag::zeros({1, 120, 120, 3}), 2);
  f(ag::zeros({1, 120, 120, 3}), 3);
  f(ag::zeros({1, 120, 120, 3}, ag::float64), 3);
  const auto lines = logs.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("first trace"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("arg 0: shape [1,100,100,3] -> [1,120,120,3]"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("arg 1: value 2 -> 3"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("arg 0: dtype float32 -> float64"), std::string::npos) << lines[3];
}

TEST(FunctionCache, ArgumentWithoutValueIsAnError) {
  auto f = ag::function([](Tensor x) { return x; }, interpreted());
  expect_error<ag::ValueError>([&] { f(Tensor()); }, {"argument 0", "has no value"});
}

TEST(FunctionCache, SeparateFunctionsDoNotShareTraces) {
  g_traces = 0;
  ag::function(double_it, interpreted())(Tensor(1));
  ag::function(double_it, interpreted())(Tensor(1));
  EXPECT_EQ(g_traces, 2);
}

}  // namespace
