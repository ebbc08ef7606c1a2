// The direct call (ag/detail/call_stub.h, CallStub::try_run_direct): a cached call of a Function
// of one to three Tensor parameters runs compiled code of one result that calls no runtime helper
// taking the call's context straight from the inline cache, with no stub and no CallState, when
// the thread's parked tensor is the result's type. stats().direct_calls says it ran; every value
// is compared with eager's bit for bit. Code that can fail or keep state (a context helper), two
// results, a tape, another tensor parked in between: the stub, with the same values. A
// misclassified function would run its failure path with no CallState and crash.
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "ag/detail/tensor_impl.h"
#include "call_path_functions.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;
using namespace callpath;

std::vector<char> bytes_of(const Tensor& t) {
  const char* p = static_cast<const char*>(ag::detail::impl_of(t)->data);
  return std::vector<char>(p, p + ag::dtype_size(t.dtype()) * static_cast<size_t>(t.num_elements()));
}

// Calls f(args...) `n` times after a call that parks a result of its type: each result has
// eager's dtype, shape and bytes (read without making a tensor, which would take the parked
// slot), and each call is a direct call.
template <class Eager, class F, class... Args>
void expect_direct_calls(Eager&& eager, F& f, int n, const Args&... args) {
  const Tensor want = eager(args...);
  f(args...);  // traces and compiles
  f(args...);  // a table hit, which makes the entry this thread's inline one
  { const Tensor parked = f(args...); }
  const ag::FunctionStats before = f.stats();
  for (int i = 0; i < n; ++i) {
    const Tensor got = f(args...);
    ASSERT_EQ(got.dtype(), want.dtype());
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(bytes_of(got), bytes_of(want)) << "call " << i;
  }
  const ag::FunctionStats after = f.stats();
  EXPECT_EQ(after.direct_calls - before.direct_calls, n);
  EXPECT_EQ(after.inline_hits - before.inline_hits, n);  // inline_hits counts the direct calls too
  EXPECT_EQ(after.memory_hits - before.memory_hits, n);
  EXPECT_EQ(after.traces, before.traces);
}

Tensor row_norms(Tensor x) { return ag::sqrt(ag::reduce_sum(x * x, {1})); }
Tensor small_product(Tensor a, Tensor b) { return ag::matmul(a, b) + 1.f; }

Tensor collatz(Tensor n) {
  Tensor steps = 0;
  ag::while_stmt([&] { return n > 1; },
                 [&] {
                   ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"},
                               AG_SOURCE_LOC("direct_call_test.cpp", 62));
                   steps += 1;
                 },
                 ag::state(n, steps), {"n", "steps"}, AG_SOURCE_LOC("direct_call_test.cpp", 60));
  return steps;
}

TEST(DirectCall, HelperFreeCodeOfOneResultRunsDirectlyWithEagersBits) {
  ASSERT_TRUE(ag::jit_available());
  auto f1 = ag::function(affine);
  auto f2 = ag::function(product_minus);
  auto f3 = ag::function(fma3);
  auto norms = ag::function(row_norms);
  auto product = ag::function(small_product);
  auto steps = ag::function(collatz);
  const auto [s, m, n, i] = callpath::Inputs();
  const Tensor sq = ag::reshape(ag::range(-8.f, 8.f, 1.f), {4, 4});
  expect_direct_calls(affine, f1, 6, s);
  expect_direct_calls(affine, f1, 6, m);  // another signature of the same Function
  expect_direct_calls(affine, f1, 6, i);
  expect_direct_calls(product_minus, f2, 6, m, n);
  expect_direct_calls(product_minus, f2, 6, m, m);  // one tensor passed twice
  expect_direct_calls(fma3, f3, 6, m, n, s);
  expect_direct_calls(fma3, f3, 6, s, s, s);
  expect_direct_calls(row_norms, norms, 6, m);
  expect_direct_calls(small_product, product, 6, sq, sq);
  expect_direct_calls(collatz, steps, 6, ag::constant(27));  // a staged while with an if
  expect_direct_calls(collatz, steps, 6, ag::constant(97));
}

// Integer division by a tensor checks for zero, which agc_rt_fail reports through the call's
// context: the code keeps its CallState (the stub), and the error is the same either way.
Tensor int_quotient(Tensor x, Tensor y) { return x / y; }

TEST(DirectCall, CodeThatReachesItsCallStateTakesTheStubAndRaisesItsErrors) {
  auto q = ag::function(int_quotient);
  auto checked = ag::function(checked_double);
  const Tensor x = ag::constant({7, -9, 4}), y = ag::constant({2, 3, -4}), zero = ag::constant({2, 0, 1});
  const Tensor good = ag::constant({1.f, 2.f}), bad = ag::constant({1.f, -2.f});
  const Tensor want_q = int_quotient(x, y), want_checked = ag::constant({2.f, 4.f});
  // Five calls as expect_direct_calls makes: every call would be direct if the code could be.
  auto five_calls = [](auto& f, const Tensor& want, const auto&... args) {
    for (int k = 0; k < 5; ++k) ASSERT_EQ(bytes_of(f(args...)), bytes_of(want));
  };
  five_calls(q, want_q, x, y);
  EXPECT_THROW(q(x, zero), ag::InvalidArgumentError);
  five_calls(checked, want_checked, good);
  EXPECT_THROW(checked(bad), ag::InvalidArgumentError);
  EXPECT_GE(q.stats().inline_hits, 3);
  EXPECT_GE(checked.stats().inline_hits, 3);
  EXPECT_EQ(q.stats().direct_calls, 0);
  EXPECT_EQ(checked.stats().direct_calls, 0);
}


TEST(DirectCall, TwoResultsAndFourArgumentsTakeOtherPaths) {
  auto two = ag::function(plus_and_square);
  auto four = ag::function([](Tensor a, Tensor b, Tensor c, Tensor d) { return a * b + c * d; });
  const Tensor x = ag::constant({1.f, 2.f});
  for (int k = 0; k < 5; ++k) {
    agtest::expect_same(plus_and_square(x), two(x), {}, "two results");
    agtest::expect_same(ag::constant({4.f, 10.f}), four(x, x, x, ag::constant(3.f)), {}, "four arguments");
  }
  EXPECT_GE(two.stats().inline_hits, 3);
  EXPECT_GE(four.stats().inline_hits, 3);
  EXPECT_EQ(two.stats().direct_calls, 0);
  EXPECT_EQ(four.stats().direct_calls, 0);
}

TEST(DirectCall, AnotherParkedTensorSendsOneCallToTheStub) {
  auto f = ag::function(affine);
  const Tensor x = ag::constant({1.f, -2.f, 3.f});
  const Tensor want = affine(x);
  for (int k = 0; k < 3; ++k) f(x);
  const ag::FunctionStats before = f.stats();
  { const Tensor other = ag::ones({5}, ag::int64); }  // parked in place of the last result
  { const Tensor got = f(x); EXPECT_EQ(bytes_of(got), bytes_of(want)); }   // the stub allocates
  { const Tensor got = f(x); EXPECT_EQ(bytes_of(got), bytes_of(want)); }   // direct again
  const ag::FunctionStats after = f.stats();
  EXPECT_EQ(after.inline_hits - before.inline_hits, 2);
  EXPECT_EQ(after.direct_calls - before.direct_calls, 1);
}

TEST(DirectCall, ATapeOutsideTakesTheRecordedPathAndTheDirectCallResumesAfterIt) {
  auto f = ag::function(product_minus);
  const Tensor x = ag::constant({1.f, 2.f}), y = ag::constant({3.f, -1.f});
  for (int k = 0; k < 3; ++k) f(x, y);
  const int64_t direct = f.stats().direct_calls;
  expect_product_minus_gradients(f, x, y);  // a tape outside the call
  EXPECT_EQ(f.stats().direct_calls, direct);
  { const Tensor other = ag::ones({5}, ag::int64); }  // the gradients' [2] floats are not parked now
  { const Tensor parked = f(x, y); }                 // the stub allocates its result
  EXPECT_EQ(f.stats().direct_calls, direct);
  const Tensor want = product_minus(x, y);
  { const Tensor got = f(x, y); EXPECT_EQ(bytes_of(got), bytes_of(want)); }
  EXPECT_EQ(f.stats().direct_calls, direct + 1);
}

// Inside another Function's trace the call is inlined into that graph (no direct call), and the
// outer Function, one result with no helper, runs directly itself: nested, in a staged loop.
ag::Function<Tensor(Tensor)>* g_step = nullptr;
Tensor repeat_step(Tensor x) {
  Tensor i = 0;
  ag::while_stmt([&] { return i < 4; },
                 [&] {
                   x = (*g_step)(x);
                   i += 1;
                 },
                 ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("direct_call_test.cpp", 176));
  return x;
}

TEST(DirectCall, ANestedFunctionInAStagedLoopIsInlinedAndTheOuterCallRunsDirectly) {
  auto step = ag::function(affine);
  g_step = &step;
  auto outer = ag::function(repeat_step);
  const Tensor x = ag::constant({0.5f, -1.f});
  Tensor want = x;
  for (int k = 0; k < 4; ++k) want = affine(want);
  expect_direct_calls([&](const Tensor&) { return want; }, outer, 5, x);
  EXPECT_EQ(step.stats().direct_calls, 0);  // only traced, never called with its own code
  g_step = nullptr;
}

// A tape inside the trace, around the nested Function: the gradient is part of the outer graph,
// whose calls run directly. d/dx sum((2x + 1) * x) = 4x + 1.
Tensor affine_gradient(Tensor x) {
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::reduce_sum((*g_step)(x) * x);
  return tape.gradient(y, {x})[0];
}

TEST(DirectCall, AGradientTakenInsideTheTraceRunsDirectly) {
  auto step = ag::function(affine);
  g_step = &step;
  auto grad = ag::function(affine_gradient);
  const Tensor x = ag::constant({0.5f, -1.f, 2.f});
  expect_direct_calls(affine_gradient, grad, 5, x);  // eager: the tape outside the Function's call
  agtest::expect_same(x * 4.f + 1.f, grad(x), {}, "4x + 1");
  g_step = nullptr;
}

// Code loaded from the disk cache is classified from its object file as code compiled here.
TEST(DirectCall, CodeLoadedFromTheDiskCacheRunsDirectly) {
  namespace fs = std::filesystem;
  const char* previous = std::getenv("AG_CACHE_DIR");
  const std::string saved = previous ? previous : "";
  const fs::path dir = fs::temp_directory_path() / ("agc-direct-call-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("AG_CACHE_DIR", dir.c_str(), 1);
  const Tensor m = ag::reshape(ag::range(0.f, 6.f, 1.f), {2, 3}), n = ag::ones({2, 3});
  {
    auto first = ag::function(fma3);
    first(m, n, m);  // compiles and stores the code
  }
  auto second = ag::function(fma3);
  expect_direct_calls(fma3, second, 4, m, n, m);
  EXPECT_EQ(second.stats().disk_hits, 1);
  EXPECT_EQ(second.stats().compiles, 0);
  if (previous) ::setenv("AG_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("AG_CACHE_DIR");
  fs::remove_all(dir);
}

}  // namespace
