// ag::pure_callback and ag::io_callback: ordinary C++ on concrete tensors, run on every call —
// eagerly, on the interpreter and from compiled code, inside a staged loop; a pure one is pruned
// when unused, an io one never; a result that does not fit the spec and an exception thrown
// inside are InvalidArgumentErrors with the line; no gradient; not saved.
#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "../common/error_message.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

std::atomic<int> g_calls{0};

// The median of a float vector, by std::nth_element: C++ the graph has no op for.
Tensor median(const Tensor& x) {
  ++g_calls;
  std::vector<float> v = x.to_vector<float>();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return ag::constant(v[v.size() / 2]);
}

Tensor centered(Tensor x) { return x - ag::pure_callback(median, ag::TensorSpec({}, ag::float32), x); }

TEST(Callback, PureRunsOnEveryCallInEveryMode) {
  const Tensor x = ag::constant({5.f, 1.f, 9.f, 3.f, 7.f});
  auto interp = ag::function(centered, {.jit_compile = false});
  auto jit = ag::function(centered);
  g_calls = 0;
  const Tensor eager = centered(x);
  agtest::expect_same(ag::constant({0.f, -4.f, 4.f, -2.f, 2.f}), eager, {}, "eager");
  for (int i = 0; i < 3; ++i) {
    agtest::expect_same(eager, interp(x), {}, "interpreter");
    agtest::expect_same(eager, jit(x), {}, "jit");
  }
  EXPECT_EQ(g_calls.load(), 7);  // once eagerly, and on each of the six calls
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
}

TEST(Callback, InAStagedLoopOncePerIteration) {
  auto f = ag::function([](Tensor x, Tensor n) {
    Tensor i = Tensor(0);
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     x = x + ag::pure_callback(median, ag::TensorSpec({}, ag::float32), x);
                     i += 1;
                   },
                   ag::state(i, x), {"i", "x"}, AG_SOURCE_LOC("callback_test.cpp", 1));
    return x;
  });
  g_calls = 0;
  agtest::expect_same(ag::constant({3.f, 4.f, 5.f}), f(ag::constant({0.f, 1.f, 2.f}), Tensor(2)), {}, "+1, then +2");
  EXPECT_EQ(g_calls.load(), 2);
}

TEST(Callback, UnusedPureIsPrunedIoIsNot) {
  std::vector<std::string> log;
  auto f = ag::function([&](Tensor x) {
    (void)ag::pure_callback(median, ag::TensorSpec({}, ag::float32), x);
    (void)ag::io_callback(
        [&](const Tensor& t) {
          log.push_back(t.str());
          return ag::constant(0);
        },
        ag::TensorSpec({}, ag::int32), x);
    return x * 2.f;
  });
  g_calls = 0;
  f(ag::constant({1.f, 2.f}));
  f(ag::constant({3.f, 4.f}));
  EXPECT_EQ(g_calls.load(), 0);
  EXPECT_EQ(log.size(), 2u);
}

int g_line = 0;
TEST(Callback, BadResultsAndExceptionsNameTheLine) {
  auto wrong = [](Tensor x) {
    g_line = __LINE__ + 1;
    return ag::pure_callback([](const Tensor& t) { return t; }, ag::TensorSpec({2}, ag::float32), x);
  };
  auto throws = [](Tensor x) {
    return ag::pure_callback([](const Tensor&) -> Tensor { throw std::runtime_error("boom"); }, ag::TensorSpec({}, ag::float32), x);
  };
  const Tensor x = ag::constant({1.f, 2.f, 3.f});
  auto interp = ag::function(wrong, {.jit_compile = false});
  auto jit = ag::function(wrong);
  auto jit_throws = ag::function(throws);
  EXPECT_THROW(wrong(x), ag::InvalidArgumentError);
  EXPECT_THROW(jit_throws(x), ag::InvalidArgumentError);
  const std::string eager = agtest::error_message([&] { wrong(x); });
  EXPECT_EQ(eager, "ag::pure_callback: the callback returned float32[3], but its result spec is float32[2] (at callback_test.cpp:" +
                       std::to_string(g_line) + ")");
  EXPECT_EQ(agtest::error_message([&] { interp(x); }), eager);
  EXPECT_EQ(agtest::error_message([&] { jit(x); }), eager);
  EXPECT_NE(agtest::error_message([&] { jit_throws(x); }).find("ag::pure_callback: the callback threw std::runtime_error: boom (at"),
            std::string::npos);
  EXPECT_THROW(ag::pure_callback(median, ag::TensorSpec({-1}, ag::float32), x), ag::ValueError);
}

TEST(Callback, NoGradientAndNotSaved) {
  const Tensor x = ag::constant({1.f, 2.f, 3.f});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::reduce_sum(centered(x));
  EXPECT_THROW((void)tape.gradient(y, x), ag::UnimplementedError);
  auto f = ag::function(centered);
  const auto cf = f.get_concrete_function(ag::TensorSpec({3}, ag::float32));
  EXPECT_THROW(ag::saved_model::save(testing::TempDir() + "/agc_callback_model", {{"centered", cf}}), ag::ValueError);
}

TEST(Callback, InsideANestedFunction) {
  auto inner = ag::function(centered);
  auto outer = ag::function([&](Tensor x) { return inner(x) * 2.f; });
  const Tensor x = ag::constant({5.f, 1.f, 9.f});
  g_calls = 0;
  const Tensor eager = centered(x) * 2.f;
  agtest::expect_same(eager, outer(x), {}, "nested, first call");
  agtest::expect_same(eager, outer(x), {}, "nested, cached call");
  EXPECT_EQ(g_calls.load(), 3);
}

// A callback given a gradient by ag::custom_gradient: x^3 computed in C++, d/dx = 3x^2, eagerly
// and in a compiled Function under a tape.
TEST(Callback, CustomGradientGivesItOne) {
  auto cube = ag::custom_gradient([](Tensor x) {
    const Tensor y = ag::pure_callback(
        [](const Tensor& t) {
          std::vector<float> v = t.to_vector<float>();
          for (float& e : v) e = e * e * e;
          return ag::constant(v, {static_cast<int64_t>(v.size())});
        },
        ag::TensorSpec({3}, ag::float32), x);
    auto grad = [x](Tensor dy) { return dy * 3.f * x * x; };
    return std::pair{y, grad};
  });
  const Tensor x = ag::constant({1.f, 2.f, -1.f});
  auto f = ag::function([&](Tensor v) { return ag::reduce_sum(cube(v)); });
  for (bool compiled : {false, true}) {
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor y = compiled ? f(x) : ag::reduce_sum(cube(x));
    agtest::expect_same(ag::constant(8.f), y, {}, compiled ? "compiled" : "eager");
    agtest::expect_same(ag::constant({3.f, 12.f, 3.f}), tape.gradient(y, x), {}, compiled ? "compiled" : "eager");
  }
}

}  // namespace
