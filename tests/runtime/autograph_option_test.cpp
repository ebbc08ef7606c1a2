// FunctionOptions::autograph = false (tf.function(autograph=False)): the converted body is traced
// as plain C++ would run it. A converted construct whose condition has no value at trace time is
// a ConversionError naming the construct, its line and the Function; one whose condition is known
// runs natively (nothing staged); ag::cond and ag::while_loop still stage. autograph = true (the
// default) stages the same body, and eager == traced.
#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;

// What ag-rewrite makes of `if (x > 0) y = x; else y = -x; return y;`.
Tensor abs_converted(Tensor x) {
  Tensor y;
  ag::if_stmt(x > 0, [&] { y = x; }, [&] { y = -x; }, ag::state(y), {"y"}, AG_SOURCE_LOC("abs.cpp", 2));
  return y;
}

// `while (x > 1) x = x / 2;`
Tensor halve_converted(Tensor x) {
  ag::while_stmt([&] { return x > 1.f; }, [&] { x = x / 2.f; }, ag::state(x), {"x"}, AG_SOURCE_LOC("halve.cpp", 5));
  return x;
}

TEST(AutographOption, ATensorConditionWithoutAValueIsAConversionErrorNamingTheLine) {
  auto f = ag::function(abs_converted, {.jit_compile = false, .name = "abs", .autograph = false});
  expect_error<ag::ConversionError>([&] { f(Tensor(-2.f)); },
                                    {"Function 'abs' has autograph = false", "tensor-dependent if", "abs.cpp:2",
                                     "ag::cond"});
  auto g = ag::function(halve_converted, {.jit_compile = false, .name = "halve", .autograph = false});
  expect_error<ag::ConversionError>([&] { g(Tensor(9.f)); }, {"'halve'", "tensor-dependent while", "halve.cpp:5"});
  auto h = ag::function([](Tensor x) { return ag::and_(x > 0, [&] { return x < 5; }, AG_SOURCE_LOC("and.cpp", 7)); },
                        {.jit_compile = false, .autograph = false});
  expect_error<ag::ConversionError>([&] { h(Tensor(1)); }, {"tensor-dependent &&", "and.cpp:7"});
}

TEST(AutographOption, TheDefaultStagesTheSameBody) {
  auto f = ag::function(abs_converted, {.jit_compile = false});
  for (float v : {-2.f, 3.f}) EXPECT_EQ(f(Tensor(v)).item<float>(), abs_converted(Tensor(v)).item<float>());
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(AutographOption, ConditionsKnownAtTraceTimeRunNatively) {
  // The condition is a captured concrete tensor: plain C++ branches on it while tracing.
  const Tensor use_square = Tensor(true);
  auto f = ag::function(
      [&](Tensor x) {
        Tensor y = x;
        ag::if_stmt(use_square, [&] { y = x * x; }, [&] { y = -x; }, ag::state(y), {"y"}, AG_SOURCE_LOC("sq.cpp", 3));
        return y;
      },
      {.jit_compile = false, .autograph = false});
  EXPECT_EQ(f(Tensor(3.f)).item<float>(), 9.f);
  const std::string text = f.get_concrete_function(ag::TensorSpec({}, ag::float32)).graph_text();
  EXPECT_EQ(text.find("If"), std::string::npos) << text;
}

TEST(AutographOption, ExplicitCondAndWhileLoopStillStage) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor y = ag::cond(x > 0, [&] { return x; }, [&] { return -x; });
        auto [n] = ag::while_loop([](Tensor v) { return v > 1.f; }, [](Tensor v) { return v / 2.f; },
                                  std::tuple{y});
        return n;
      },
      {.jit_compile = false, .autograph = false});
  EXPECT_EQ(f(Tensor(-8.f)).item<float>(), 1.f);
  EXPECT_EQ(f(Tensor(3.f)).item<float>(), 0.75f);
  EXPECT_EQ(f.tracing_count(), 1);
}

}  // namespace
