// Recursion through Functions that ends at trace time (TensorFlow's test_recursive_tf_function):
// each level calls the Function with a new signature (a plain C++ argument that decreases), so
// each level is traced once and inlined into the level above. Mutual recursion through two
// Functions; gradients through them; a call with the signature being traced is an error (that
// recursion would not end), never a deadlock or a stack overflow.
#include "jit_test_util.h"

namespace {

using ag::Tensor;

ag::Function<Tensor(Tensor, int)>* g_power = nullptr;

// x^n by recursion on the plain n.
Tensor power(Tensor x, int n) {
  if (n == 0) return ag::ones_like(x);
  return x * (*g_power)(x, n - 1);
}

TEST(RecursiveFunctions, EachLevelANewSignature) {
  for (bool jit : {false, true}) {
    auto f = ag::function(power, {.jit_compile = jit, .name = "power"});
    g_power = &f;
    std::string log;
    ag::set_log_sink([&](std::string_view line) { log += line; });
    EXPECT_FLOAT_EQ(f(Tensor(2.0f), 4).item<float>(), 16.0f) << jit;
    ag::set_log_sink(nullptr);
    EXPECT_EQ(f.tracing_count(), 5) << "a trace per level: n = 4, 3, 2, 1, 0";
    EXPECT_EQ(log.find("WARNING"), std::string::npos) << "traces inside a trace are not retraces of calls: " << log;
    EXPECT_FLOAT_EQ(f(Tensor(3.0f), 4).item<float>(), 81.0f);
    EXPECT_EQ(f.tracing_count(), 5) << "the same signatures again: cached";
    // Gradients through the levels: d/dx x^4 = 4 x^3.
    auto d = ag::grad([&](Tensor x) { return f(x, 4); });
    EXPECT_FLOAT_EQ(d(Tensor(2.0f)).item<float>(), 32.0f);
    ag::GradientTape tape;
    const Tensor x(2.0f);
    tape.watch(x);
    EXPECT_FLOAT_EQ(tape.gradient(f(x, 3), x).item<float>(), 12.0f);
    g_power = nullptr;
  }
}

ag::Function<Tensor(Tensor, int)>* g_even = nullptr;
ag::Function<Tensor(Tensor, int)>* g_odd = nullptr;

// even(x, n) = x + odd(x, n - 1), odd(x, n) = x * even(x, n - 1), each ending at n = 0.
Tensor even(Tensor x, int n) { return n == 0 ? x : x + (*g_odd)(x, n - 1); }
Tensor odd(Tensor x, int n) { return n == 0 ? x : x * (*g_even)(x, n - 1); }

TEST(RecursiveFunctions, MutualRecursionThroughTwoFunctions) {
  auto e = ag::function(even, {.name = "even"});
  auto o = ag::function(odd, {.name = "odd"});
  g_even = &e;
  g_odd = &o;
  // even(x, 3) = x + x * (x + x) = x + 2x^2; at 3: 21. Its gradient 1 + 4x = 13.
  EXPECT_FLOAT_EQ(e(Tensor(3.0f), 3).item<float>(), 21.0f);
  EXPECT_EQ(e.tracing_count(), 2);
  EXPECT_EQ(o.tracing_count(), 2);
  auto d = ag::grad([&](Tensor x) { return e(x, 3); });
  EXPECT_FLOAT_EQ(d(Tensor(3.0f)).item<float>(), 13.0f);
  ag::run_functions_eagerly(true);
  EXPECT_FLOAT_EQ(e(Tensor(3.0f), 3).item<float>(), 21.0f);
  ag::run_functions_eagerly(false);
  g_even = g_odd = nullptr;
}

ag::Function<Tensor(Tensor)>* g_forever = nullptr;

// Calls itself with the same signature: a tensor that decreases, which only a staged if could
// stop, and tracing stages both branches.
Tensor forever(Tensor n) { return (*g_forever)(n - 1) + 1; }

TEST(RecursiveFunctions, ACallWithTheSignatureBeingTracedIsAConversionError) {
  auto f = ag::function(forever, {.name = "forever"});
  g_forever = &f;
  for (int attempt = 0; attempt < 2; ++attempt)
    agtest::expect_raises<ag::ConversionError>(f, {"Function 'forever' calls itself while it is being traced",
                                                   "forever(arg0: TensorSpec(shape=(), dtype=int32))",
                                                   "new signature"},
                                               Tensor(5));
  EXPECT_EQ(f.tracing_count(), 0);
  g_forever = nullptr;
}

}  // namespace
