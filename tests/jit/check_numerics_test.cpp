// enable_check_numerics() in compiled code: the error is the eager (and interpreter) one — op,
// element, result type, line — from checks fused into the loops (an element of a value that was
// never written to memory, of one read broadcast, of a GEMM's result, in a staged loop); the
// checked code is a second cache entry of the same trace, and turning checks off goes back to
// the first without compiling.
#include <string>

#include "../common/error_message.h"
#include "../common/log_capture.h"
#include "../common/nan_in_a_loop.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

// The message of the error f(args...) throws, or "no error".
template <class F, class... Args>
std::string failure(F&& f, const Args&... args) {
  return agtest::error_message([&] { f(args...); });
}

struct ChecksOn {
  ChecksOn() { ag::debugging::enable_check_numerics(); }
  ~ChecksOn() { ag::debugging::disable_check_numerics(); }
};

// Eager, interpreted and compiled f(args...) fail with the same message, which contains `expected`.
template <class F, class... Args>
void expect_same_failure(F f, const std::string& expected, const Args&... args) {
  auto interp = ag::function(f, {.jit_compile = false});
  auto jit = ag::function(f);
  EXPECT_THROW(f(args...), ag::InvalidArgumentError);
  const std::string eager = failure(f, args...);
  EXPECT_NE(eager.find(expected), std::string::npos) << eager;
  EXPECT_EQ(failure(interp, args...), eager);
  EXPECT_EQ(failure(jit, args...), eager);
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
}

int g_line = 0;

TEST(JitCheckNumerics, ElementOfAFusedValueNeverStored) {
  const ChecksOn on;
  // log(x) lives only in registers of the loop that computes exp(2 log x) + 1.
  auto f = [](Tensor x) {
    g_line = __LINE__ + 1;
    return ag::exp(ag::log(x) * 2.f) + 1.f;
  };
  Tensor x = ag::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, -6.f}});
  expect_same_failure(f, "check_numerics: ag::log produced NaN at element [1, 2] of its float32[2,3] result", x);
  EXPECT_NE(failure(f, x).find("(at check_numerics_test.cpp:" + std::to_string(g_line) + ")"), std::string::npos);
}

TEST(JitCheckNumerics, ElementOfAValueReadBroadcast) {
  const ChecksOn on;
  // sqrt(v) of shape [3] is computed inside the [2, 3] loop of the sum, once per row.
  auto f = [](Tensor v, Tensor m) { return ag::sqrt(v) + m; };
  expect_same_failure(f, "ag::sqrt produced NaN at element [1] of its float32[3] result", ag::constant({1.f, -1.f, 4.f}),
                      ag::constant({{1.f, 1.f, 1.f}, {2.f, 2.f, 2.f}}));
  // ... and a column read along rows ([3, 1] against [3, 4]).
  auto g = [](Tensor c, Tensor m) { return ag::log(c) * m; };
  expect_same_failure(g, "ag::log produced -inf at element [2, 0] of its float32[3,1] result",
                      ag::constant({{1.f}, {2.f}, {0.f}}), ag::ones({3, 4}));
}

TEST(JitCheckNumerics, ResultOfAProductAndAReduction) {
  const ChecksOn on;
  auto f = [](Tensor a, Tensor b) { return ag::matmul(a, b); };
  expect_same_failure(f, "ag::matmul produced inf at element [0, 1] of its float32[2,2] result",
                      ag::constant({{3e30f, 1.f}, {1.f, 1.f}}), ag::constant({{1.f, 3e30f}, {1.f, 1.f}}));
  // Squares that are finite and a sum that is not.
  auto g = [](Tensor x) { return ag::reduce_sum(x * x, {1}); };
  expect_same_failure(g, "ag::reduce_sum produced inf at element [0] of its float32[2] result",
                      ag::constant({{1.5e19f, 1.5e19f}, {1.f, 2.f}}));
  // A short row's sum runs unrolled into adds (unroll_short_reductions), but the checked code
  // keeps the reduction, so the square that overflows is named with its own element.
  auto h = [](Tensor x) { return ag::reduce_sum(ag::square(x), {1}); };
  expect_same_failure(h, "ag::square produced inf at element [1, 0] of its float32[2,2] result",
                      ag::constant({{1.f, 2.f}, {3e20f, 1.f}}));
}

TEST(JitCheckNumerics, VectorLoopsNameTheLane) {
  const ChecksOn on;
  // Rows long enough for agc's vector loops (tests/opt/check_numerics.graph checks their IR): the
  // bad element in a whole block, in the partial block at the end, and read broadcast per row.
  auto f = [](Tensor x) { return ag::sqrt(x * 2.f) + 1.f; };
  for (int64_t bad : {777, 1001}) {
    std::vector<float> v(1003, 2.f);
    v[static_cast<size_t>(bad)] = -1.f;
    expect_same_failure(f, "ag::sqrt produced NaN at element [" + std::to_string(bad) + "] of its float32[1003] result",
                        ag::constant(v, {1003}));
  }
  auto g = [](Tensor v, Tensor m) { return ag::sqrt(v) + m; };
  std::vector<float> v(64, 4.f);
  v[50] = -4.f;
  expect_same_failure(g, "ag::sqrt produced NaN at element [50] of its float32[64] result", ag::constant(v, {64}),
                      ag::ones({40, 64}));
  // Two checks fail in one block (one branch for all of a block's checks): the error path names
  // the first in evaluation order, with its own lane. (Lanes 0 and 1: in one block at every
  // vector width, and the first element in a scalar loop too, so every mode agrees.)
  auto h = [](Tensor a, Tensor b) { return ag::sqrt(a) + ag::sqrt(b * 2.f); };
  std::vector<float> a(64, 1.f), b(64, 1.f);
  a[0] = -1.f;
  b[1] = -1.f;
  expect_same_failure(h, "ag::sqrt produced NaN at element [0] of its float32[64] result", ag::constant(a, {64}),
                      ag::constant(b, {64}));
  // All finite, with a partial block whose lanes past the end are never checked.
  auto jit = ag::function(f);
  const Tensor halves = ag::fill({1003}, Tensor(0.5f));
  EXPECT_TRUE(agtest::same_tensor(f(halves), jit(halves)));
}

TEST(JitCheckNumerics, NaNPlantedInAStagedLoop) {
  const ChecksOn on;
  const Tensor x = ag::constant({10.f, 5.f, 2.f});
  expect_same_failure(agtest::roots, "check_numerics: ag::sqrt produced NaN at element [2] of its float32[3] result", x,
                      Tensor(3));
  EXPECT_NE(failure(agtest::roots, x, Tensor(3)).find("nan_in_a_loop.h:" + std::to_string(agtest::nan_in_a_loop_line())), std::string::npos);
}

TEST(JitCheckNumerics, InsideANestedFunctionAndComparedWithEager) {
  auto inner = ag::function([](Tensor x) { return ag::log(x); });
  auto outer = ag::function([&](Tensor x) { return inner(x) + 1.f; });
  const Tensor bad = ag::constant({1.f, -1.f});
  {
    const ChecksOn on;
    EXPECT_NE(failure(outer, bad).find("check_numerics: ag::log produced NaN at element [1] of its float32[2] result"),
              std::string::npos)
        << failure(outer, bad);
  }
  // Unchecked, the NaN comes back, and compiled and eager agree on every value (NaN matches NaN).
  EXPECT_TRUE(std::isnan(outer(bad).to_vector<float>()[1]));
  EXPECT_TRUE(ag::debugging::compare_with_eager(outer, bad).equal());
}

TEST(JitCheckNumerics, CheckedCodeIsASecondEntryOfTheSameTrace) {
  auto f = ag::function(agtest::roots);
  const Tensor x = ag::constant({10.f, 5.f, 2.f});
  const Tensor plain = f(x, Tensor(2));
  EXPECT_TRUE(std::isnan(f(x, Tensor(3)).to_vector<float>()[2]));  // unchecked: NaN comes back
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
  {
    const ChecksOn on;
    agtest::LogCapture log(ag::detail::LogTopic::Compile);
    agtest::expect_same(plain, f(x, Tensor(2)), {}, "checked, finite");
    EXPECT_NE(log.text().find("(numeric checks) with jit"), std::string::npos) << log.text();
    EXPECT_NE(failure(f, x, Tensor(3)), "no error");
    EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 2);
  }
  agtest::expect_same(plain, f(x, Tensor(2)), {}, "unchecked again");
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 2);  // no compile: the first code runs
  EXPECT_EQ(f.tracing_count(), 1);
  // The compiled checks are fused: the checked IR has the failure call, the plain IR does not.
  EXPECT_EQ(f.get_concrete_function(x, Tensor(2)).llvm_ir().find("agc_rt_fail"), std::string::npos);
}

TEST(JitCheckNumerics, UnderATapeEveryOpIsChecked) {
  const ChecksOn on;
  auto f = ag::function([](Tensor x) { return ag::reduce_sum(ag::sqrt(x)); });
  const Tensor x = ag::constant({4.f, 0.f});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = f(x);
  const std::string msg = failure([&] { (void)tape.gradient(y, x); });
  EXPECT_NE(msg.find("produced inf at element [1] of its float32[2] result"), std::string::npos) << msg;
}

}  // namespace
