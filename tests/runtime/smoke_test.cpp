// A first end-to-end check of the runtime: eager ops, tracing, staged control flow.
#include <ag/ag.h>
#include <gtest/gtest.h>

namespace {

ag::Tensor collatz(ag::Tensor n) {
  ag::Tensor steps = 0;
  ag::while_stmt([&] { return n > 1; },
                 [&] {
                   ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"},
                               AG_SOURCE_LOC("collatz.cpp", 4));
                   steps += 1;
                 },
                 ag::state(n, steps), {"n", "steps"}, AG_SOURCE_LOC("collatz.cpp", 3));
  return steps;
}

TEST(Smoke, CollatzEagerAndTracedAgree) {
  auto f = ag::function(collatz, {.jit_compile = false});
  for (int n : {1, 2, 7, 27, 97}) {
    EXPECT_EQ(collatz(ag::Tensor(n)).item<int>(), f(ag::Tensor(n)).item<int>()) << n;
  }
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f(ag::Tensor(27)).item<int>(), 111);
}

}  // namespace
