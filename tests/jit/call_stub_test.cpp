// The cached call's stub (ag/detail/call_stub.h, CompiledExecutable::run_fixed): a compiled
// concrete function of one to three tensors in and one or two out runs its cached calls through
// one function that the Function reaches by a tail call and that clears the call's hazard slot
// itself. Each test checks that the stub is there (white-box) and that it served the calls
// (stats().inline_hits, and not direct_calls), with the values of eager; the slot must be free after every call — a
// call that threw included — or the next call would miss the inline cache for the table.
#include <tuple>

#include "function/concrete.h"
#include "call_path_functions.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;
using namespace callpath;

template <class F, class... Args>
bool has_stub(F& f, const Args&... args) {
  return f.get_concrete_function(args...).core()->direct_stub() != nullptr;
}

// Calls f(args...) `n` times: each result equal to eager's, each call after the first an
// inline-cache hit served by the stub.
template <class Eager, class F, class... Args>
void expect_stub_calls(Eager&& eager, F& f, int n, const Args&... args) {
  const auto want = eager(args...);
  f(args...);  // traces and compiles
  f(args...);  // a table hit, which makes the entry this thread's inline one
  ASSERT_TRUE(ag::jit_available());
  ASSERT_TRUE(has_stub(f, args...));
  const int64_t hits = f.stats().inline_hits, direct = f.stats().direct_calls;
  for (int i = 0; i < n; ++i) {
    // A tensor of another type parked first, so that a call of one result cannot run directly
    // (direct_call_test.cpp) and takes the stub.
    { const Tensor other = ag::ones({5}, ag::int64); }
    agtest::expect_same(want, f(args...), {}, "stub call");
  }
  EXPECT_EQ(f.stats().inline_hits - hits, n);
  EXPECT_EQ(f.stats().direct_calls, direct);
}


TEST(CallStub, EveryCountWithAStubServesCachedCallsWithEagersValues) {
  auto f1 = ag::function(affine);
  auto f2 = ag::function(product_minus);
  auto f3 = ag::function(fma3);
  auto g1 = ag::function(plus_and_square);
  auto g2 = ag::function(sum_and_difference);
  const auto [s, m, n, i] = callpath::Inputs();
  expect_stub_calls(affine, f1, 5, s);
  expect_stub_calls(affine, f1, 5, m);  // another signature of the same Function
  expect_stub_calls(affine, f1, 5, i);
  expect_stub_calls(product_minus, f2, 5, m, n);
  expect_stub_calls(product_minus, f2, 5, m, m);  // one tensor passed twice
  expect_stub_calls(fma3, f3, 5, m, n, s);
  expect_stub_calls(plus_and_square, g1, 5, n);
  expect_stub_calls(sum_and_difference, g2, 5, n, s);
}

TEST(CallStub, OtherCallsKeepTheGeneralPathWithTheSameValues) {
  // Four arguments, three results, a result that is an argument: no stub, the same values.
  auto four = ag::function([](Tensor a, Tensor b, Tensor c, Tensor d) { return a * b + c * d; });
  auto three = ag::function([](Tensor x) { return std::make_tuple(x + 1, x + 2, x + 3); });
  auto identity = ag::function([](Tensor x) { return x; });
  const Tensor x = ag::constant({1.f, 2.f});
  for (int k = 0; k < 3; ++k) {
    agtest::expect_same(ag::constant({4.f, 10.f}), four(x, x, x, ag::constant(3.f)), {}, "four");
    agtest::expect_same(ag::constant({4.f, 5.f}), std::get<2>(three(x)), {}, "three");
    agtest::expect_same(x, identity(x), {}, "identity");
  }
  EXPECT_FALSE(has_stub(four, x, x, x, ag::constant(3.f)));
  EXPECT_FALSE(has_stub(three, x));
  EXPECT_FALSE(has_stub(identity, x));
  EXPECT_GE(four.stats().inline_hits, 1);
}


TEST(CallStub, ACallThatThrowsFreesItsSlotAndTheNextCallIsAnInlineHit) {
  auto f = ag::function(checked_double);
  const Tensor good = ag::constant({1.f, 2.f}), bad = ag::constant({1.f, -2.f});
  for (int k = 0; k < 2; ++k) agtest::expect_same(ag::constant({2.f, 4.f}), f(good), {}, "first calls");
  ASSERT_TRUE(has_stub(f, good));
  for (int k = 0; k < 3; ++k) {
    EXPECT_THROW(f(bad), ag::InvalidArgumentError);
    // (memory_hits counts the inline hits too)
    const int64_t inline_hits = f.stats().inline_hits, memory_hits = f.stats().memory_hits;
    agtest::expect_same(ag::constant({2.f, 4.f}), f(good), {}, "after a failure");
    EXPECT_EQ(f.stats().inline_hits, inline_hits + 1) << "the failed call left its hazard slot held";
    EXPECT_EQ(f.stats().memory_hits, memory_hits + 1);
  }
}

TEST(CallStub, ATapeTakesTheRecordedPathAndTheStubServesAgainAfterIt) {
  auto f = ag::function(product_minus);
  const Tensor x = ag::constant({1.f, 2.f}), y = ag::constant({3.f, -1.f});
  f(x, y);
  ASSERT_TRUE(has_stub(f, x, y));
  expect_product_minus_gradients(f, x, y);  // a tape outside the call
  const int64_t hits = f.stats().inline_hits;
  agtest::expect_same(product_minus(x, y), f(x, y), {}, "after the tape");
  EXPECT_EQ(f.stats().inline_hits, hits + 1);
}

// A Function called from a callback inside another's compiled code, on the same thread: the
// outer call holds the thread's slot (handed to its stub), so the inner call takes the table.
ag::Function<Tensor(Tensor)>* g_inner = nullptr;
Tensor call_inner(const Tensor& x) { return (*g_inner)(x); }
Tensor outer(Tensor x) { return ag::pure_callback(call_inner, ag::TensorSpec({2}, ag::float32), x) * 10.f; }

TEST(CallStub, AFunctionCalledInsideAStubCallTakesTheTableAndGetsItsValues) {
  auto inner = ag::function(affine);
  g_inner = &inner;
  auto f = ag::function(outer);
  const Tensor x = ag::constant({1.f, -3.f});
  for (int k = 0; k < 2; ++k) agtest::expect_same(ag::constant({30.f, -50.f}), f(x), {}, "first calls");
  ASSERT_TRUE(has_stub(f, x));
  const int64_t inner_inline = inner.stats().inline_hits, inner_memory = inner.stats().memory_hits;
  const int64_t outer_inline = f.stats().inline_hits;
  for (int k = 0; k < 4; ++k) agtest::expect_same(ag::constant({30.f, -50.f}), f(x), {}, "nested");
  EXPECT_EQ(inner.stats().inline_hits, inner_inline);
  EXPECT_EQ(inner.stats().memory_hits, inner_memory + 4);  // table hits (memory_hits counts inline ones too)
  EXPECT_EQ(f.stats().inline_hits, outer_inline + 4);
  g_inner = nullptr;
}

}  // namespace
