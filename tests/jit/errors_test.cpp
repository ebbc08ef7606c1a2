// Run-time errors inside compiled code raise ag::InvalidArgumentError in the caller, naming the op
// and the user's source line; the function stays usable afterwards. (Out of memory:
// out_of_memory_test.cpp.)
#include <string>

#include "jit_test_util.h"

namespace {

using agtest::expect_invalid_argument;

int gather_line = 0;
ag::Tensor gather_fn(ag::Tensor p, ag::Tensor i) {
  ag::Tensor y = p * 2.0f;
  gather_line = __LINE__ + 1;
  return ag::gather(y, i) + 1.0f;
}

TEST(JitErrors, GatherIndexOutOfRange) {
  auto f = ag::function(gather_fn);
  const ag::Tensor p = ag::constant({1.0f, 2.0f, 3.0f});
  EXPECT_TRUE(agtest::same_tensor(gather_fn(p, ag::constant({2, 0})), f(p, ag::constant({2, 0}))));
  const std::string at = "errors_test.cpp:" + std::to_string(gather_line);
  expect_invalid_argument(f, {"ag::gather", "index 3", at}, p, ag::constant({0, 3}));
  expect_invalid_argument(f, {"ag::gather", "index -1", at}, p, ag::constant({-1, 0}));
  // The same shapes again, now valid: the compiled code is reused and works.
  EXPECT_TRUE(agtest::same_tensor(gather_fn(p, ag::constant({1, 1})), f(p, ag::constant({1, 1}))));
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
  // The interpreter raises the same error type.
  auto g = ag::function(gather_fn, {.jit_compile = false});
  EXPECT_THROW(g(p, ag::constant({0, 3})), ag::InvalidArgumentError);
}

int div_line = 0;
ag::Tensor divide_fn(ag::Tensor a, ag::Tensor b) {
  div_line = __LINE__ + 1;
  ag::Tensor q = a / b;
  return q * 3 + 1;
}

TEST(JitErrors, IntegerDivisionByZero) {
  auto f = ag::function(divide_fn);
  const ag::Tensor a = ag::constant({7, 8, 9});
  EXPECT_TRUE(agtest::same_tensor(divide_fn(a, ag::constant({1, 2, 3})), f(a, ag::constant({1, 2, 3}))));
  expect_invalid_argument(f, {"ag::divide", "integer division by zero", "errors_test.cpp:" + std::to_string(div_line)}, a,
                          ag::constant({1, 0, 3}));
  // Scalars live in registers: the check is there too.
  expect_invalid_argument(f, {"division by zero"}, ag::Tensor(5), ag::Tensor(0));
  EXPECT_THROW(divide_fn(a, ag::constant({1, 0, 3})), ag::InvalidArgumentError);
}

int loop_line = 0;
ag::Tensor error_in_loop(ag::Tensor n, ag::Tensor d) {
  ag::Tensor i = 0, acc = ag::zeros({4}, ag::int32);
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   loop_line = __LINE__ + 1;
                   acc = acc + ag::floormod(ag::fill({4}, i), d - i);  // d - i reaches 0 when i == d
                   i += 1;
                 },
                 ag::state(i, acc), {"i", "acc"}, AG_SOURCE_LOC("errors_test.cpp", 1));
  return acc;
}

TEST(JitErrors, ErrorInsideALoopLeavesNothingBehind) {
  auto f = ag::function(error_in_loop);
  EXPECT_TRUE(agtest::same_tensor(error_in_loop(ag::Tensor(3), ag::Tensor(10)), f(ag::Tensor(3), ag::Tensor(10))));
  for (int k = 0; k < 3; ++k)
    expect_invalid_argument(f, {"ag::floormod", "errors_test.cpp:" + std::to_string(loop_line)}, ag::Tensor(8), ag::Tensor(5));
  EXPECT_TRUE(agtest::same_tensor(error_in_loop(ag::Tensor(4), ag::Tensor(9)), f(ag::Tensor(4), ag::Tensor(9))));
}

TEST(JitErrors, NegativeIntegerPowerAndEmptyArgMax) {
  auto p = ag::function([](ag::Tensor a, ag::Tensor b) { return ag::pow(a, b); });
  expect_invalid_argument(p, {"ag::pow", "negative"}, ag::constant({2, 3}), ag::constant({1, -1}));
  auto am = ag::function([](ag::Tensor x) { return ag::argmax(x, 0); },
                         {.input_signature = {ag::TensorSpec({-1}, ag::float32)}});
  EXPECT_EQ(am(ag::constant({1.0f, 3.0f, 2.0f})).item<int64_t>(), 1);
  expect_invalid_argument(am, {"ag::argmax", "empty"}, ag::zeros({0}));
  auto r = ag::function([](ag::Tensor d) { return ag::range(ag::Tensor(0), ag::Tensor(5), d); });
  expect_invalid_argument(r, {"ag::range", "delta"}, ag::Tensor(0));
}

}  // namespace
