// A variable first given a value inside a staged loop has none after the loop when it ran zero
// times: reading it raises InvalidArgumentError naming the variable, the loop's line and the
// read, on the interpreter and in compiled code (TensorFlow's loop_created_variables_test), never
// zeros. Eagerly the plain C++ reading applies (a Tensor without a value).
#include "jit_test_util.h"

namespace {

using ag::Tensor;

// The guide's last_doubled, as ag-rewrite lowers it: `last` is first set inside the loop.
Tensor last_doubled(Tensor x, Tensor n) {
  Tensor last, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   last = x[i] * 2;
                   i += 1;
                 },
                 ag::state(last, i), {"last", "i"}, AG_SOURCE_LOC("last_doubled.cpp", 3));
  return last;
}

TEST(ZeroTripLoops, ReadingAVariableTheLoopNeverSetRaises) {
  const Tensor x = ag::constant({1.5f, -2.0f, 4.0f});
  for (int n : {1, 3}) agtest::expect_three_way("n=" + std::to_string(n), last_doubled, {}, x, Tensor(n));
  for (bool jit : {false, true}) {
    auto f = ag::function(last_doubled, {.jit_compile = jit});
    agtest::expect_raises<ag::InvalidArgumentError>(
        f, {"'last' has no value", "while loop at last_doubled.cpp:3", "ran zero times", "before the loop"}, x, Tensor(0));
    EXPECT_FLOAT_EQ(f(x, Tensor(2)).item<float>(), -4.0f) << "usable after the error";
    EXPECT_EQ(f.tracing_count(), 1);
  }
  // Eagerly the loop runs as plain C++: `last` keeps no value.
  EXPECT_FALSE(last_doubled(x, Tensor(0)).has_value());
}

// A staged range-for, a value read only where the loop ran, and a gradient through it.
TEST(ZeroTripLoops, ARangeForAndAGuardedReadAndAGradient) {
  auto f = [](Tensor x, Tensor n) {
    Tensor acc, any = false;
    ag::for_stmt(ag::range(n), ag::no_extra_test,
                 [&](Tensor i) {
                   acc = x * ag::cast(i + 1, x.dtype());
                   any = true;
                 },
                 ag::state(acc, any), {"acc", "any"}, AG_SOURCE_LOC("guarded.cpp", 2));
    Tensor out;
    ag::if_stmt(any, [&] { out = acc; }, [&] { out = ag::zeros_like(x); }, ag::state(out), {"out"},
                AG_SOURCE_LOC("guarded.cpp", 6));
    return out;
  };
  for (int n : {0, 2}) agtest::expect_three_way("n=" + std::to_string(n), f, {}, ag::constant({1.0f, 2.0f}), Tensor(n));
  auto g = [&](Tensor x, Tensor n) {
    ag::GradientTape tape;
    tape.watch(x);
    return tape.gradient(ag::reduce_sum(f(x, n)), x, ag::UnconnectedGradients::zero);
  };
  for (int n : {0, 3}) agtest::expect_three_way("gradient n=" + std::to_string(n), g, {}, ag::constant({1.0f, 2.0f}), Tensor(n));
}

// A value the first loop may not have set, carried into a second staged loop: the second loop's
// use of it is a read (TensorFlow's assert guards the first loop's output wherever it goes), so
// a zero-trip first loop raises there too, never carrying zeros on.
Tensor carried_on(Tensor x, Tensor n, Tensor m) {
  Tensor last, i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   last = x[i];
                   i += 1;
                 },
                 ag::state(last, i), {"last", "i"}, AG_SOURCE_LOC("carried_on.cpp", 3));
  Tensor j = 0;
  ag::while_stmt([&] { return j < m; },
                 [&] {
                   last = last + 1.f;
                   j += 1;
                 },
                 ag::state(last, j), {"last", "j"}, AG_SOURCE_LOC("carried_on.cpp", 8));
  return last;
}

TEST(ZeroTripLoops, AValueCarriedIntoALaterLoopIsCheckedThere) {
  const Tensor x = ag::constant({1.5f, -2.0f, 4.0f});
  for (auto [n, m] : {std::pair{1, 2}, std::pair{3, 0}, std::pair{2, 1}})
    agtest::expect_three_way("n=" + std::to_string(n) + " m=" + std::to_string(m), carried_on, {}, x, Tensor(n), Tensor(m));
  for (bool jit : {false, true}) {
    auto f = ag::function(carried_on, {.jit_compile = jit});
    for (int m : {0, 2})
      agtest::expect_raises<ag::InvalidArgumentError>(f, {"'last' has no value", "while loop at carried_on.cpp:3", "ran zero times"},
                                                      x, Tensor(0), Tensor(m));
    EXPECT_FLOAT_EQ(carried_on(x, Tensor(2), Tensor(2)).item<float>(), f(x, Tensor(2), Tensor(2)).item<float>());
    EXPECT_EQ(f.tracing_count(), 1);
  }
}

}  // namespace
