// Container arguments (TensorFlow's list and tuple arguments): std::vector<ag::Tensor> and
// std::array<ag::Tensor, N> are traced per length and per element dtype and shape; vectors of
// plain numbers are part of the signature by value.
#include <array>
#include <atomic>

#include "test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::expect_error;
using agtest::interpreted;
using Tensors = std::vector<Tensor>;

// x + sum_k (k + 1) * ws[k]: the weights tell whether the elements arrive in order.
Tensor weighted_sum(Tensor x, const std::vector<Tensor>& ws) {
  Tensor acc = x;
  for (size_t k = 0; k < ws.size(); ++k) acc = acc + ws[k] * static_cast<float>(k + 1);
  return acc;
}
const bool weighted_sum_names =
    ag::detail::register_function_info(reinterpret_cast<const void*>(&weighted_sum), "weighted_sum", {"x", "ws"});

// The last element: its dtype may differ from x's.
Tensor last_of(Tensor x, const std::vector<Tensor>& ws) { return ws.empty() ? x : ws.back(); }
const bool last_of_names =
    ag::detail::register_function_info(reinterpret_cast<const void*>(&last_of), "last_of", {"x", "ws"});

std::vector<float> floats(const Tensor& t) { return t.to_vector<float>(); }

TEST(ContainerArgs, VectorOfTensorsTracesPerLengthDtypeAndShape) {
  auto f = ag::function(weighted_sum, interpreted());
  const Tensor x = ag::constant({1.f, 2.f});
  EXPECT_EQ(floats(f(x, {ag::constant({1.f, 1.f}), ag::constant({10.f, 20.f})})), (std::vector<float>{22.f, 43.f}));
  EXPECT_EQ(f.tracing_count(), 1);
  // Same length, dtypes and shapes, other values: no retrace.
  EXPECT_EQ(floats(f(x, {ag::constant({0.f, 1.f}), ag::constant({2.f, 3.f})})), (std::vector<float>{5.f, 9.f}));
  EXPECT_EQ(f.tracing_count(), 1);
  // Another length.
  EXPECT_EQ(floats(f(x, {ag::constant({1.f, 1.f}), ag::constant({1.f, 1.f}), ag::constant({1.f, 1.f})})),
            (std::vector<float>{7.f, 8.f}));
  EXPECT_EQ(f.tracing_count(), 2);
  // An element of another shape (broadcasts against x).
  EXPECT_EQ(floats(f(x, {ag::constant({1.f, 1.f}), ag::constant(3.f)})), (std::vector<float>{8.f, 9.f}));
  EXPECT_EQ(f.tracing_count(), 3);
  // An element of another dtype (weighted_sum's float32 x would not add to it: another function).
  auto g = ag::function([](const Tensors& ws) { return ws[0] - ws[1]; }, interpreted());
  EXPECT_EQ(g({Tensor(5.f), Tensor(2.f)}).item<float>(), 3.f);
  EXPECT_EQ(g({Tensor(5.0), Tensor(2.0)}).item<double>(), 3.0);
  EXPECT_EQ(g({Tensor(7.0), Tensor(1.0)}).item<double>(), 6.0);
  EXPECT_EQ(g.tracing_count(), 2);
  // The empty vector is a length too.
  EXPECT_EQ(floats(f(x, {})), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(f.tracing_count(), 4);
  EXPECT_EQ(f.concrete_functions().size(), 4u);
}

TEST(ContainerArgs, ElementsBecomeOneGraphParameterEachInOrder) {
  auto f = ag::function(weighted_sum, interpreted());
  const auto c = f.get_concrete_function(TensorSpec({2}, ag::float32), std::vector<TensorSpec>{TensorSpec({2}, ag::float32),
                                                                                          TensorSpec({}, ag::float32)});
  EXPECT_EQ(c.graph().params.size(), 3u);
  EXPECT_EQ(c.signature(),
            "weighted_sum(x: TensorSpec(shape=(2,), dtype=float32), ws: [TensorSpec(shape=(2,), dtype=float32), "
            "TensorSpec(shape=(), dtype=float32)]) -> TensorSpec(shape=(2,), dtype=float32)");
  // ws[1] has weight 2, ws[0] weight 1.
  EXPECT_EQ(floats(c(ag::constant({1.f, 1.f}), {ag::constant({1.f, 2.f}), Tensor(10.f)})), (std::vector<float>{22.f, 23.f}));
}

TEST(ContainerArgs, PlaceholdersAreNamedAfterTheParameterAndIndex) {
  std::string seen;
  auto f = ag::function(
      [&](const Tensors& ws) {
        seen = ws[1].str();
        return ws[0];
      },
      interpreted());
  f({Tensor(1), ag::constant({1.f, 2.f})});
  EXPECT_EQ(seen, "Tensor(\"arg0[1]:0\", shape=(2,), dtype=float32)");
}

TEST(ContainerArgs, StdArrayByValueAndByConstReference) {
  auto by_value = ag::function([](std::array<Tensor, 2> ab) { return ab[0] * 10 + ab[1]; }, interpreted());
  auto by_ref = ag::function([](const std::array<Tensor, 3>& abc) { return abc[0] * 100 + abc[1] * 10 + abc[2]; },
                             {.jit_compile = false, .name = "digits"});
  EXPECT_EQ(by_value({Tensor(1), Tensor(2)}).item<int>(), 12);
  EXPECT_EQ(by_value({Tensor(3), Tensor(4)}).item<int>(), 34);
  EXPECT_EQ(by_value.tracing_count(), 1);
  EXPECT_EQ(by_value({Tensor(int64_t{3}), Tensor(int64_t{4})}).item<int64_t>(), 34);  // int64 elements
  EXPECT_EQ(by_value.tracing_count(), 2);
  EXPECT_EQ(by_ref({Tensor(1), Tensor(2), Tensor(3)}).item<int>(), 123);
  EXPECT_EQ(by_ref.pretty_printed_concrete_signatures(),
            "digits(arg0: [TensorSpec(shape=(), dtype=int32), TensorSpec(shape=(), "
            "dtype=int32), TensorSpec(shape=(), dtype=int32)]) -> TensorSpec(shape=(), dtype=int32)\n");
}

TEST(ContainerArgs, VectorOfNumbersIsPartOfTheSignatureByValue) {
  std::atomic<int> traces{0};
  auto f = ag::function(
      [&](Tensor x, std::vector<int> ks) {
        ++traces;
        Tensor y = x;
        for (int k : ks) y = y * k;  // a plain loop: unrolled while tracing
        return y;
      },
      {.jit_compile = false, .name = "scale_by"});
  EXPECT_EQ(f(Tensor(3), {1, -1}).item<int>(), -3);
  EXPECT_EQ(f(Tensor(4), {1, -1}).item<int>(), -4);
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(f(Tensor(3), {-1, 1}).item<int>(), -3);  // another order is another value
  EXPECT_EQ(f(Tensor(3), {2, 2, 2}).item<int>(), 24);
  EXPECT_EQ(traces, 3);
  EXPECT_EQ(f.tracing_count(), 3);
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("scale_by(arg0: TensorSpec(shape=(), dtype=int32), arg1: std::vector<int> = [1, -1])"),
            std::string::npos)
      << sigs;
  EXPECT_NE(sigs.find("arg1: std::vector<int> = [2, 2, 2]"), std::string::npos) << sigs;
}

TEST(ContainerArgs, VectorsOfFloatsBoolsAndArraysOfNumbers) {
  auto f = ag::function(
      [](Tensor x, const std::vector<float>& scales, std::vector<bool> negate, std::array<int64_t, 2> shift) {
        Tensor y = x;
        for (size_t k = 0; k < scales.size(); ++k) y = negate[k] ? y * -scales[k] : y * scales[k];
        return y + static_cast<float>(shift[0] * shift[1]);
      },
      interpreted());
  EXPECT_EQ(f(Tensor(1.f), {0.5f, 4.f}, {true, false}, {2, 3}).item<float>(), 4.f);
  EXPECT_EQ(f(Tensor(2.f), {0.5f, 4.f}, {true, false}, {2, 3}).item<float>(), 2.f);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f(Tensor(1.f), {0.5f, 4.f}, {false, false}, {2, 3}).item<float>(), 8.f);
  EXPECT_EQ(f(Tensor(1.f), {0.5f, 4.f}, {false, false}, {2, 4}).item<float>(), 10.f);
  EXPECT_EQ(f(Tensor(1.f), {0.25f, 4.f}, {false, false}, {2, 4}).item<float>(), 9.f);
  EXPECT_EQ(f.tracing_count(), 4);
  const std::string sig = f.concrete_functions()[0].signature();
  EXPECT_NE(sig.find("arg1: std::vector<float> = [0.5, 4], arg2: std::vector<bool> = [true, false], "
                     "arg3: std::array<int64_t, 2> = [2, 3]"),
            std::string::npos)
      << sig;
}

TEST(ContainerArgs, ReduceRetracingGeneralizesElementDimsAndTheMostSpecificMatchWins) {
  int trace_id = 0;
  // The trace's number is baked in as a constant: the result says which concrete function ran.
  auto f = ag::function([&](const Tensors& ws) { return ag::reduce_sum(ws[0]) * 0 + ws[1] * 0 + float(++trace_id); },
                        {.reduce_retracing = true, .jit_compile = false});
  const Tensor s = Tensor(1.f);
  EXPECT_EQ(f({ag::zeros({3}), s}).item<float>(), 1.f);
  EXPECT_EQ(f({ag::zeros({4}), s}).item<float>(), 2.f);  // generalized: ws[0] of shape (None,)
  EXPECT_EQ(f({ag::zeros({7}), s}).item<float>(), 2.f);  // served by the generalized trace
  EXPECT_EQ(f({ag::zeros({3}), s}).item<float>(), 1.f);  // the exact trace is more specific
  EXPECT_EQ(f.tracing_count(), 2);
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("arg0: [TensorSpec(shape=(None,), dtype=float32), TensorSpec(shape=(), dtype=float32)]"),
            std::string::npos)
      << sigs;
  // Another length is not the same family: it traces exactly.
  EXPECT_EQ(f({ag::zeros({5}), s, s}).item<float>(), 3.f);
  EXPECT_EQ(f.tracing_count(), 3);
}

TEST(ContainerArgs, RetraceLogNamesTheElement) {
  agtest::LogCapture logs(static_cast<unsigned>(ag::detail::LogTopic::Retrace));
  auto f = ag::function(last_of, interpreted());
  const Tensor x = ag::zeros({3});
  f(x, {ag::zeros({3}), ag::zeros({3}), ag::zeros({3})});
  f(x, {ag::zeros({3}), ag::zeros({3}), ag::zeros({4})});
  f(x, {ag::zeros({3}), ag::zeros({3, 1}, ag::float32)});
  f(x, {ag::zeros({3}), ag::zeros({3}, ag::float64), ag::zeros({3})});
  auto g = ag::function([](Tensor x, std::vector<int> ks) { return x * static_cast<int>(ks.size()); }, interpreted());
  g(Tensor(1), {1, -1});
  g(Tensor(1), {1, 2});
  const auto lines = logs.lines();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[1].find("arg 1 'ws'[2]: shape [3] -> [4]"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("arg 1 'ws': length 3 -> 2"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("arg 1 'ws'[1]: dtype float32 -> float64"), std::string::npos) << lines[3];
  EXPECT_NE(lines[5].find("arg 1[1]: value -1 -> 2"), std::string::npos) << lines[5];
}

TEST(ContainerArgs, ConcreteFunctionRejectsWrongLengthDtypeAndShape) {
  auto f = ag::function(weighted_sum, interpreted());
  const auto c = f.get_concrete_function(ag::zeros({2}), Tensors{ag::zeros({2}), ag::zeros({2})});
  const Tensor x = ag::zeros({2});
  expect_error<ag::ValueError>([&] { c(x, {ag::zeros({2})}); }, {"argument 1 'ws'", "has 1 tensor(s), expected 2"});
  expect_error<ag::TypeError>([&] { c(x, {ag::zeros({2}), ag::zeros({2}, ag::int32)}); },
                              {"argument 1 'ws'[1]", "has dtype int32, expected float32"});
  expect_error<ag::ValueError>([&] { c(x, {ag::zeros({3}), ag::zeros({2})}); },
                               {"argument 1 'ws'[0]", "has shape (3,), expected (2,)"});
  expect_error<ag::ValueError>([&] { c(x, {ag::zeros({2}), Tensor()}); }, {"argument 1 'ws'[1]", "has no value"});
  EXPECT_EQ(floats(c(x, {ag::ones({2}), ag::ones({2})})), (std::vector<float>{3.f, 3.f}));
  // A call through the Function names the element without a value too.
  expect_error<ag::ValueError>([&] { f(x, {ag::zeros({2}), Tensor()}); }, {"argument 1 'ws'[1]", "has no value"});
  // A vector of numbers other than the traced one: a TypeError, as for a plain scalar.
  auto g = ag::function([](Tensor x, std::vector<int> ks) { return x * ks[0]; }, interpreted());
  const auto cg = g.get_concrete_function(TensorSpec({}, ag::int32), std::vector<int>{2, 3});
  EXPECT_EQ(cg(Tensor(5), {2, 3}).item<int>(), 10);
  expect_error<ag::TypeError>([&] { cg(Tensor(5), {2, 4}); }, {"argument 1", "traced with the value [2, 3], got [2, 4]"});
  expect_error<ag::TypeError>([&] { cg(Tensor(5), {2}); }, {"traced with the value [2, 3], got [2]"});
}

TEST(ContainerArgs, GetConcreteFunctionWithSpecsServesMatchingShapes) {
  auto f = ag::function(weighted_sum, interpreted());
  const std::vector<TensorSpec> specs = {TensorSpec({-1}, ag::float32), TensorSpec({}, ag::float32)};
  const auto c = f.get_concrete_function(TensorSpec({-1}, ag::float32), specs);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(floats(c(ag::ones({3}), {ag::ones({3}), Tensor(2.f)})), (std::vector<float>{6.f, 6.f, 6.f}));
  // The Function's calls of fitting shapes are served by it.
  EXPECT_EQ(floats(f(ag::ones({5}), {ag::ones({5}), Tensor(1.f)})), (std::vector<float>(5, 4.f)));
  EXPECT_EQ(f.tracing_count(), 1);
  // An unknown-rank element spec makes a concrete function whose element has an unknown rank
  // (TensorFlow's): it serves any rank that broadcasts with x.
  const auto cu = f.get_concrete_function(ag::zeros({2}), std::vector<TensorSpec>{TensorSpec::unknown_rank(ag::float32)});
  EXPECT_NE(cu.signature().find("ws: [TensorSpec(shape=None, dtype=float32)]"), std::string::npos) << cu.signature();
  EXPECT_EQ(floats(cu(ag::ones({2}), {Tensor(2.f)})), (std::vector<float>{3.f, 3.f}));
  EXPECT_EQ(floats(cu(ag::ones({2}), {ag::ones({2, 2})})), (std::vector<float>(4, 2.f)));
  expect_error<ag::InvalidArgumentError>([&] { cu(ag::ones({2}), {ag::ones({3})}); }, {"not broadcast-compatible"});
  // Example containers work as well.
  auto arr = ag::function([](std::array<Tensor, 2> ab) { return ab[0] + ab[1]; }, interpreted());
  const auto ca = arr.get_concrete_function(std::array<Tensor, 2>{Tensor(1), Tensor(2)});
  EXPECT_EQ(ca({Tensor(5), Tensor(6)}).item<int>(), 11);
  const auto cs = arr.get_concrete_function(std::vector<TensorSpec>{TensorSpec({2}, ag::int32), TensorSpec({2}, ag::int32)});
  EXPECT_EQ(cs({ag::constant({1, 2}), ag::constant({3, 4})}).to_vector<int>(), (std::vector<int>{4, 6}));
  expect_error<ag::ValueError>([&] { arr.get_concrete_function(std::vector<TensorSpec>{TensorSpec({2}, ag::int32)}); },
                               {"argument 0", "std::array<ag::Tensor, 2>", "1 TensorSpec(s)"});
}

TEST(ContainerArgs, InputSignatureGivesAnArrayItsNSpecsAndRejectsVectors) {
  auto f = ag::function([](Tensor x, std::array<Tensor, 2> ab) { return x * ab[0] + ab[1]; },
                        {.input_signature = {TensorSpec({-1}, ag::float32, "x"), TensorSpec({}, ag::float32, "a"),
                                             TensorSpec({-1}, ag::float32, "b")},
                         .jit_compile = false});
  EXPECT_EQ(floats(f(ag::constant({1.f, 2.f}), {Tensor(3.f), ag::constant({1.f, 1.f})})), (std::vector<float>{4.f, 7.f}));
  EXPECT_EQ(floats(f(ag::constant({1.f, 2.f, 3.f}), {Tensor(1.f), ag::constant({0.f, 0.f, 1.f})})),
            (std::vector<float>{1.f, 2.f, 4.f}));
  EXPECT_EQ(f.tracing_count(), 1);
  expect_error<ag::TypeError>([&] { f(ag::constant({1.f}), {Tensor(3.0), ag::constant({1.f})}); },
                              {"argument 1[0] 'a'", "dtype float64", "TensorSpec(shape=(), dtype=float32, name='a')"});
  expect_error<ag::ValueError>([&] { f(ag::constant({1.f}), {Tensor(3.f), Tensor(1.f)}); },
                               {"argument 1[1] 'b'", "shape ()", "TensorSpec(shape=(None,), dtype=float32, name='b')"});
  // get_concrete_function() without arguments takes the array's specs from the signature.
  const auto c = f.get_concrete_function();
  EXPECT_NE(c.signature().find("arg1: [TensorSpec(shape=(), dtype=float32), TensorSpec(shape=(None,), dtype=float32)]"),
            std::string::npos)
      << c.signature();
  EXPECT_EQ(f.tracing_count(), 1);

  expect_error<ag::ValueError>(
      [&] {
        ag::function([](Tensor x, std::array<Tensor, 2> ab) { return x + ab[0] + ab[1]; },
                     {.input_signature = {TensorSpec({}, ag::float32), TensorSpec({}, ag::float32)}});
      },
      {"input_signature has 2 TensorSpec(s) but the function takes 3 tensor(s)"});
  expect_error<ag::ValueError>(
      [&] { ag::function(weighted_sum, {.input_signature = {TensorSpec({-1}, ag::float32)}}); },
      {"parameter 1 'ws' is a std::vector<ag::Tensor>", "input_signature cannot describe", "std::array<ag::Tensor, N>",
       "ag::stack"});
}

TEST(ContainerArgs, RunFunctionsEagerlyRunsTheBodyWithTheContainer) {
  auto f = ag::function(weighted_sum, interpreted());
  const Tensors ws = {ag::constant({1.f, 2.f}), ag::constant({3.f, 4.f})};
  const Tensor graph = f(ag::zeros({2}), ws);
  ag::run_functions_eagerly(true);
  Tensor eager;
  try {
    eager = f(ag::zeros({2}), ws);
  } catch (...) {
    ag::run_functions_eagerly(false);
    throw;
  }
  ag::run_functions_eagerly(false);
  EXPECT_FALSE(eager.is_symbolic());
  EXPECT_EQ(floats(eager), (std::vector<float>{7.f, 10.f}));
  EXPECT_EQ(floats(graph), floats(eager));
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(ContainerArgs, NestedFunctionsWithContainersAreInlined) {
  auto inner = ag::function(weighted_sum, interpreted());
  auto scaled = ag::function([](Tensor x, std::vector<float> k) { return x * k[0] + k[1]; }, interpreted());
  auto outer = ag::function(
      [&](Tensor x, std::array<Tensor, 2> ab) {
        const Tensor s = inner(x, {ab[0], ab[1]});
        return scaled(s, {2.f, 1.f});
      },
      interpreted());
  EXPECT_EQ(floats(outer(ag::constant({1.f}), {ag::constant({1.f}), ag::constant({2.f})})), (std::vector<float>{13.f}));
  EXPECT_EQ(inner.tracing_count(), 1);
  EXPECT_EQ(scaled.tracing_count(), 1);
  // The outer graph calls nothing: the inner graphs were inlined into it.
  const auto c = outer.concrete_functions()[0];
  EXPECT_EQ(c.graph().params.size(), 3u);
  EXPECT_EQ(floats(outer(ag::constant({0.f}), {ag::constant({1.f}), ag::constant({1.f})})), (std::vector<float>{7.f}));
  EXPECT_EQ(outer.tracing_count(), 1);
  // A ConcreteFunction called while tracing is inlined as well.
  const auto ci = inner.concrete_functions()[0];
  auto outer2 = ag::function([&](Tensor x) { return ci(x, {x, x}); }, interpreted());
  EXPECT_EQ(floats(outer2(ag::constant({2.f}))), (std::vector<float>{8.f}));
}

}  // namespace
