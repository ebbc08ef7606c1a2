// Staged asserts in compiled code: the error the caller gets is the eager (and interpreter)
// one, message and line included; code with asserts keeps working after a failure; asserts
// run in program order with prints, also inside staged if/while.
#include <mutex>
#include <string>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

// The InvalidArgumentError message of f(args...) ("" when it does not fail).
template <class F, class... Args>
std::string failure(F&& f, const Args&... args) {
  try {
    f(args...);
  } catch (const ag::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

int g_line = 0;
Tensor guarded(Tensor x, Tensor n) {
  Tensor i = Tensor(0);
  Tensor acc = ag::zeros_like(x);
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   ag::if_stmt(i > 1, [&] { ag::assert_less(acc, 10.f, "acc stays small"); }, [] {}, ag::state(), {},
                               AG_SOURCE_LOC("assert.cpp", 1));
                   acc += x;
                   i += 1;
                 },
                 ag::state(i, acc), {"i", "acc"}, AG_SOURCE_LOC("assert.cpp", 2));
  g_line = __LINE__ + 1;
  ag::assert_true(ag::reduce_all(acc >= 0), "non-negative");
  return acc;
}

TEST(JitAssert, SameErrorAsEagerAndInterpreter) {
  auto interp = ag::function(guarded, {.jit_compile = false});
  auto jit = ag::function(guarded);
  const Tensor x = ag::constant({1.f, 2.f, 3.f});
  for (int n : {0, 2, 3}) agtest::expect_same(guarded(x, Tensor(n)), jit(x, Tensor(n)), {}, "n=" + std::to_string(n));
  // Fails inside the loop's staged if (acc = [3 6 9] reaches 12 at i = 4) ...
  const std::string in_loop = failure(guarded, x, Tensor(6));
  ASSERT_NE(in_loop.find("assertion failed: acc stays small: ag::assert_less(x, y) is false at 1 of 3 elements, "
                         "first at index [2]; x = [4 8 12]; y = 10"),
            std::string::npos)
      << in_loop;
  EXPECT_EQ(failure(interp, x, Tensor(6)), in_loop);
  EXPECT_EQ(failure(jit, x, Tensor(6)), in_loop);
  // ... and after it, with this file's line.
  const Tensor neg = ag::constant({-1.f, 2.f, 3.f});
  const std::string after = failure(guarded, neg, Tensor(1));
  ASSERT_NE(after.find("assertion failed: non-negative: condition is false (at assert_test.cpp:" +
                       std::to_string(g_line) + ")"),
            std::string::npos)
      << after;
  EXPECT_EQ(failure(interp, neg, Tensor(1)), after);
  EXPECT_EQ(failure(jit, neg, Tensor(1)), after);
  // The compiled code stays usable after returning an error.
  agtest::expect_same(guarded(x, Tensor(2)), jit(x, Tensor(2)), {}, "after a failure");
  EXPECT_EQ(jit.tracing_count(), 1);
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
}

TEST(JitAssert, PrintBeforeRunsPrintAfterDoesNot) {
  std::string text;
  std::mutex mu;
  ag::set_print_sink([&](std::string_view s) {
    std::lock_guard lock(mu);
    text += s;
  });
  auto jit = ag::function([](Tensor x) {
    ag::print("before", x);
    ag::assert_equal(x % 2, 0, "even");  // unused by the result: kept anyway
    ag::print("after");
    return x / 2;
  });
  EXPECT_EQ(jit(ag::constant({2, 4})).to_vector<int>(), (std::vector<int>{1, 2}));
  const std::string msg = failure(jit, ag::constant({2, 5}));
  ag::set_print_sink(nullptr);
  EXPECT_NE(msg.find("assertion failed: even: ag::assert_equal(x, y) is false at 1 of 2 elements, first at index [1]; "
                     "x = [0 1]; y = 0"),
            std::string::npos)
      << msg;
  EXPECT_EQ(text, "before [2 4]\nafter\nbefore [2 5]\n");
}

}  // namespace
