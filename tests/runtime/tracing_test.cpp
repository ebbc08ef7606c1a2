// Tracing semantics from the tf.function guides: side effects, prints, Variables, captures,
// leaks, recursion, nested Functions, eager debugging, non-strict execution.
#include <atomic>
#include <optional>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

TEST(Tracing, PrintRunsEveryCallPlainSideEffectsOnlyWhileTracing) {
  agtest::PrintCapture prints;
  int cpp_side_effects = 0;
  auto f = ag::function(
      [&](Tensor x) {
        ++cpp_side_effects;
        ag::print("Executed with", x);
        return x;
      },
      interpreted());
  f(Tensor(1));
  f(Tensor(1));
  f(Tensor(2));
  EXPECT_EQ(cpp_side_effects, 1);
  const auto lines = prints.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "Executed with 1\n");
  EXPECT_EQ(lines[2], "Executed with 2\n");
}

TEST(Tracing, CapturedPlainValuesAreFrozenAtTraceTime) {
  int external = 20;
  ag::Variable v(Tensor(10));
  auto f = ag::function(
      [&]() {
        v.assign_add(1);
        return std::tuple<Tensor, Tensor>{Tensor(external), v.value()};
      },
      interpreted());
  std::vector<int> frozen, grown;
  for (int i = 0; i < 3; ++i) {
    auto [a, b] = f();
    external += 1;  // ignored by the trace: captured by value
    frozen.push_back(a.item<int>());
    grown.push_back(b.item<int>());
  }
  EXPECT_EQ(frozen, (std::vector<int>{20, 20, 20}));
  EXPECT_EQ(grown, (std::vector<int>{11, 12, 13}));
  EXPECT_EQ(v.value().item<int>(), 13);
}

TEST(Tracing, VariableUpdatedAcrossCallsAndReadInOrder) {
  ag::Variable v(ag::constant({1.f, 2.f}), "v");
  auto f = ag::function(
      [&](Tensor x) {
        Tensor before = v.value();
        v.assign(before * x);
        Tensor after = v.read_value();
        return before + after;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(2.f)).to_vector<float>(), (std::vector<float>{3.f, 6.f}));
  EXPECT_EQ(f(Tensor(2.f)).to_vector<float>(), (std::vector<float>{6.f, 12.f}));
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{4.f, 8.f}));
}

TEST(Tracing, VariableAssignmentIsKeptEvenWhenUnused) {
  ag::Variable counter(Tensor(0));
  auto f = ag::function(
      [&](Tensor x) {
        counter.assign_add(1);  // result unused: still a side effect
        return x;
      },
      interpreted());
  for (int i = 0; i < 4; ++i) f(Tensor(i));
  EXPECT_EQ(counter.value().item<int>(), 4);
}

TEST(Tracing, VariableCreatedOnlyOnFirstTrace) {
  std::unique_ptr<ag::Variable> count;
  auto f = ag::function(
      [&](Tensor x) {
        if (!count) count = std::make_unique<ag::Variable>(Tensor(0));
        count->assign_add(1);
        return x + count->value();
      },
      interpreted());
  EXPECT_EQ(f(Tensor(0)).item<int>(), 1);
  EXPECT_EQ(f(Tensor(0)).item<int>(), 2);
  EXPECT_EQ(f(ag::constant({10})).to_vector<int>(), std::vector<int>{13});  // new signature, same Variable
  EXPECT_EQ(f.tracing_count(), 2);
}

TEST(Tracing, CreatingAVariableOnEveryTraceIsAValueErrorOnTheFirstCall) {
  // TensorFlow: a tf.function that creates a tf.Variable unconditionally raises on its first call
  // (it is traced twice, and the second trace creates another Variable).
  int runs = 0;
  auto f = ag::function(
      [&](Tensor x) {
        ++runs;
        ag::Variable v(Tensor(1.f));
        return x + v.value();
      },
      {.jit_compile = false, .name = "f"});
  expect_error<ag::ValueError>([&] { f(Tensor(1.f)); }, {"'f'", "creates an ag::Variable on every trace"});
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(f.tracing_count(), 0);
}

// A Function that creates its Variable on first use (the TensorFlow idiom) and counts its traces.
auto creating_on_first_use(int& runs, std::optional<ag::Variable>& v) {
  return ag::function(
      [&](Tensor x) {
        ++runs;
        if (!v) v.emplace(Tensor(1.f));
        v->assign_add(x);
        return v->value();
      },
      {.jit_compile = false, .name = "f"});
}

TEST(Tracing, AFunctionThatCreatesVariablesIsTracedTwiceOnItsFirstCall) {
  int runs = 0;
  std::optional<ag::Variable> v;
  auto f = creating_on_first_use(runs, v);
  EXPECT_EQ(f(Tensor(2.f)).item<float>(), 3.f);  // the kept graph reads the Variable the first trace made
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(f(Tensor(2.f)).item<float>(), 5.f);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(f.tracing_count(), 1);
  // A Function that creates none is traced once.
  int plain_runs = 0;
  auto g = ag::function([&](Tensor x) { ++plain_runs; return x * 2; }, {.jit_compile = false});
  g(Tensor(1.f));
  EXPECT_EQ(plain_runs, 1);
}

// After evict() the next call traces again, once: the Variable the first call made is the one
// read (TensorFlow has no evict; its retraces likewise create no Variable).
TEST(Tracing, AVariableMadeOnFirstUseSurvivesEvict) {
  int runs = 0;
  std::optional<ag::Variable> v;
  auto f = creating_on_first_use(runs, v);
  EXPECT_EQ(f(Tensor(2.f)).item<float>(), 3.f);
  f.evict();
  EXPECT_EQ(f.tracing_count(), 0);
  EXPECT_EQ(f(Tensor(2.f)).item<float>(), 5.f);
  EXPECT_EQ(runs, 3) << "two traces on the first call, one after evict";
  EXPECT_EQ(f.tracing_count(), 1);
  // A Variable created anew after evict (the optional reset) is a later trace's: an error.
  v.reset();
  f.evict();
  expect_error<ag::ValueError>([&] { f(Tensor(1.f)); }, {"'f'", "Variable", "first trace"});
}

TEST(Tracing, CreatingAVariableOnALaterTraceIsAValueError) {
  auto f = ag::function(
      [](Tensor x) {
        if (x.rank() == 1) ag::Variable v(Tensor(1.f));  // only the second signature creates one
        return x + 1.f;
      },
      {.jit_compile = false, .name = "f"});
  EXPECT_EQ(f(Tensor(1.f)).item<float>(), 2.f);
  expect_error<ag::ValueError>([&] { f(ag::constant({1.f})); }, {"'f'", "Variable", "first trace"});
}

TEST(Tracing, VariableInitialValueMustNotBeSymbolic) {
  auto f = ag::function([](Tensor x) { return ag::Variable(x).value(); }, interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(1.f)); }, {"initial value"});
}

Tensor g_leaked;

TEST(Tracing, LeakedTensorIsAConversionError) {
  auto leaky = ag::function(
      [](Tensor a) {
        g_leaked = a + 1;  // bad: leaks a symbolic tensor
        return a + 2;
      },
      {.jit_compile = false, .name = "leaky_function"});
  EXPECT_EQ(leaky(Tensor(1)).item<int>(), 3);
  EXPECT_TRUE(g_leaked.is_symbolic());
  expect_error<ag::ConversionError>([&] { (void)(g_leaked * 2); }, {"leaked", "'leaky_function'"});
  auto captures = ag::function([](Tensor b) { return b + g_leaked; }, interpreted());
  expect_error<ag::ConversionError>([&] { captures(Tensor(2)); }, {"leaked"});
  expect_error<ag::ConversionError>([&] { (void)g_leaked.item<int>(); }, {"symbolic"});
  g_leaked = Tensor();
}

TEST(Tracing, SymbolicTensorToBoolAsksForTheRewriter) {
  auto f = ag::function(
      [](Tensor x) {
        if (x > 0) return x;  // plain C++ if on a symbolic tensor
        return -x;
      },
      interpreted());
  expect_error<ag::ConversionError>([&] { f(Tensor(1)); }, {"AG_FUNCTION", "ag-rewrite"});
}

ag::Function<Tensor(Tensor)>* g_recursive = nullptr;
Tensor recursive(Tensor n) { return (*g_recursive)(n - 1); }

TEST(Tracing, RecursionIsReportedNotAStackOverflow) {
  auto f = ag::function(recursive, {.jit_compile = false, .name = "recursive_fn"});
  g_recursive = &f;
  expect_error<ag::ConversionError>([&] { f(Tensor(5)); }, {"'recursive_fn'", "calls itself"});
  g_recursive = nullptr;
}

TEST(Tracing, NestedFunctionsAreInlined) {
  auto add = ag::function([](Tensor a, Tensor b) { return a + b; }, {.jit_compile = false, .name = "add"});
  auto dense = ag::function([&](Tensor x, Tensor w, Tensor b) { return add(ag::matmul(x, w), b); },
                            {.jit_compile = false, .name = "dense_layer"});
  Tensor out = dense(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2}));
  EXPECT_EQ(out.shape(), ag::Shape({3, 2}));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(6, 3.f));
  EXPECT_EQ(add.tracing_count(), 1);
  const std::string text = dense.concrete_functions()[0].graph_text();
  EXPECT_NE(text.find("MatMul"), std::string::npos) << text;
  EXPECT_NE(text.find("Add"), std::string::npos) << text;
  // The outer graph holds the inner ops themselves, not a call.
  EXPECT_EQ(dense.concrete_functions()[0].graph().params.size(), 3u);
  add(ag::ones({3, 2}), ag::ones({2}));  // the inner Function's own cache served it
  EXPECT_EQ(add.tracing_count(), 1);
}

TEST(Tracing, RunFunctionsEagerlyRunsTheBodyEveryCall) {
  agtest::PrintCapture prints;
  int calls = 0;
  auto get_mse = ag::function(
      [&](Tensor y_true, Tensor y_pred) {
        ++calls;
        return ag::reduce_mean(ag::square(y_pred - y_true));
      },
      interpreted());
  ag::run_functions_eagerly(true);
  for (int i = 0; i < 3; ++i) get_mse(ag::constant({1.f, 2.f}), ag::constant({1.f, 4.f}));
  ag::run_functions_eagerly(false);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(get_mse.tracing_count(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(get_mse(ag::constant({1.f, 2.f}), ag::constant({1.f, 4.f})).item<float>(), 2.f);
  EXPECT_EQ(calls, 4);
}

TEST(Tracing, NonStrictExecutionPrunesUnusedOps) {
  auto unused_error = ag::function(
      [](Tensor x) {
        (void)ag::gather(x, Tensor(int64_t{3}));  // out of range, but unused
        return x;
      },
      interpreted());
  expect_error<ag::InvalidArgumentError>([] { (void)ag::gather(ag::constant({0.f}), Tensor(int64_t{3})); },
                                         {"out of range"});
  EXPECT_EQ(unused_error(ag::constant({0.f})).to_vector<float>(), std::vector<float>{0.f});
  const std::string text = unused_error.concrete_functions()[0].graph_text();
  EXPECT_EQ(text.find("Gather"), std::string::npos) << text;
}

TEST(Tracing, ConcreteTensorsCapturedAsConstants) {
  Tensor w = ag::constant({1.f, 2.f});
  auto f = ag::function([&](Tensor x) { return x * w; }, interpreted());
  EXPECT_EQ(f(Tensor(2.f)).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  w = ag::constant({5.f, 5.f});  // rebinding the C++ variable does not change the trace
  EXPECT_EQ(f(Tensor(2.f)).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
}

TEST(Tracing, TupleAndVoidReturns) {
  agtest::PrintCapture prints;
  auto split = ag::function([](Tensor x) { return std::tuple<Tensor, Tensor>{x + 1, x * 2}; }, interpreted());
  auto [a, b] = split(Tensor(3));
  EXPECT_EQ(a.item<int>(), 4);
  EXPECT_EQ(b.item<int>(), 6);
  auto say = ag::function([](Tensor x) { ag::print("x =", x); }, interpreted());
  say(Tensor(7));
  say(Tensor(8));
  EXPECT_EQ(prints.text(), "x = 7\nx = 8\n");
}

TEST(Tracing, ReturningAnInputOrAConstant) {
  auto ident = ag::function([](Tensor x) { return x; }, interpreted());
  Tensor in = ag::constant({1, 2});
  EXPECT_EQ(ident(in).to_vector<int>(), (std::vector<int>{1, 2}));
  auto konst = ag::function([](Tensor) { return ag::constant({7, 8}); }, interpreted());
  EXPECT_EQ(konst(Tensor(1)).to_vector<int>(), (std::vector<int>{7, 8}));
}

TEST(Tracing, SymbolicTensorsReportStaticShapes) {
  std::string seen;
  auto f = ag::function(
      [&](Tensor x) {
        seen = x.shape().str();
        EXPECT_TRUE(x.is_symbolic());
        return x;
      },
      {.input_signature = {ag::TensorSpec({-1, 3}, ag::float32)}, .jit_compile = false});
  f(ag::zeros({2, 3}));
  EXPECT_EQ(seen, "[?,3]");
}

TEST(Tracing, RuntimeShapeErrorsAreInvalidArgument) {
  auto f = ag::function([](Tensor a, Tensor b) { return a + b; },
                        {.input_signature = {ag::TensorSpec({-1}, ag::float32), ag::TensorSpec({-1}, ag::float32)},
                         .jit_compile = false});
  EXPECT_EQ(f(ag::ones({3}), ag::ones({3})).num_elements(), 3);
  expect_error<ag::InvalidArgumentError>([&] { f(ag::ones({3}), ag::ones({4})); }, {"broadcast", "[3]", "[4]"});
}

}  // namespace

// Every traced node records the line its op was written on; unary operators too (they take an
// Operand for that, like the binary ones).
TEST(Tracing, UnaryOperatorsRecordTheirLine) {
  int neg_line = 0, not_line = 0;
  auto f = ag::function(
      [&](Tensor x, Tensor b) {
        neg_line = __LINE__ + 1;
        Tensor n = -x;
        not_line = __LINE__ + 1;
        Tensor m = ~b;
        return std::tuple<Tensor, Tensor>{n, m};
      },
      interpreted());
  auto [n, m] = f(ag::constant({1, -2}), ag::constant({true, false}));
  EXPECT_EQ(n.to_vector<int>(), (std::vector<int>{-1, 2}));
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{false, true}));
  const std::string g = f.concrete_functions()[0].graph_text();
  for (auto [op, line] : {std::pair{"Neg(", neg_line}, std::pair{"LogicalNot(", not_line}}) {
    const size_t at = g.find(op);
    ASSERT_NE(at, std::string::npos) << g;
    const std::string node_line = g.substr(at, g.find('\n', at) - at);
    EXPECT_NE(node_line.find("tracing_test.cpp:" + std::to_string(line)), std::string::npos) << node_line;
  }
}

TEST(Tracing, UnaryMinusOfAVariableReadsIt) {
  ag::Variable v(ag::constant({3, -4}));
  EXPECT_EQ((-v).to_vector<int>(), (std::vector<int>{-3, 4}));
}
