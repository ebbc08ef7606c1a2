// Helpers for the JIT tests: compare tensors (bit-exact integers, documented float tolerance) and
// run one C++ function eagerly, through the graph interpreter and through the JIT.
#pragma once

#include <ag/ag.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <fstream>
#include <string>
#include <tuple>

#include "../common/scoped_env.h"
#include "ag/detail/log.h"

namespace agtest {

// The bytes of a vector register of the code the JIT makes here: the level ctest sets in
// AG_JIT_CPU (x86-64-v2: SSE, x86-64-v3: AVX2), else the host's.
// x^31 by 30 chained products: for 10x10 int32, one packed kernel (244 instructions) that
// compiles as a second module (docs/jit.md, "Two threads per compile").
inline ag::Tensor power(const ag::Tensor& x) {
  ag::Tensor r = x;
  for (int i = 0; i < 30; ++i) r = ag::matmul(x, r);
  return r;
}

inline int64_t jit_vector_bytes() {
  const char* cpu = std::getenv("AG_JIT_CPU");
  const std::string level = cpu ? cpu : "";
  if (level == "x86-64-v2") return 16;
  if (level == "x86-64-v3") return 32;
  return __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx2") ? 32 : 16;
}

// Whether LLVM IR calls a function whose name starts with `prefix` (declarations, and the
// llvm.compiler.used list LLVM's vector-library mapping adds for every variant, do not count).
inline bool ir_calls(const std::string& ir, const std::string& prefix) {
  size_t pos = 0;
  while ((pos = ir.find("@" + prefix, pos)) != std::string::npos) {
    const size_t line = ir.rfind('\n', pos) + 1;
    const std::string head = ir.substr(line, pos - line);
    if (head.rfind("declare", 0) != 0 && head.find("call ") != std::string::npos) return true;
    ++pos;
  }
  return false;
}

// Float tolerance: |jit - eager| <= atol + rtol * |eager|, NaN matches NaN. The JIT and Eigen use
// different (both few-ULP) implementations of exp/log/tanh/sigmoid/sin/cos and may sum in another
// order, so floats are compared within this tolerance; integers and bools must match exactly.
struct Tol {
  double rtol = 2e-5;
  double atol = 1e-6;
};

inline ::testing::AssertionResult same_tensor(const ag::Tensor& expected, const ag::Tensor& actual, Tol tol = {}) {
  if (!expected.has_value() || !actual.has_value()) return ::testing::AssertionFailure() << "a tensor has no value";
  if (expected.dtype() != actual.dtype())
    return ::testing::AssertionFailure() << "dtype " << ag::dtype_name(actual.dtype()) << " vs " << ag::dtype_name(expected.dtype());
  if (!(expected.shape() == actual.shape()))
    return ::testing::AssertionFailure() << "shape " << actual.shape().str() << " vs " << expected.shape().str();
  const int64_t n = expected.num_elements();
  if (ag::is_floating(expected.dtype())) {
    const auto e = expected.to_vector<double>(), a = actual.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const double x = e[i], y = a[i];
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y) continue;
      if (std::isinf(x) || std::isinf(y) || std::isnan(x) || std::isnan(y) || std::abs(x - y) > tol.atol + tol.rtol * std::abs(x))
        return ::testing::AssertionFailure() << "element " << i << ": " << y << " vs expected " << x << " (in "
                                             << actual.str() << " vs " << expected.str() << ")";
    }
  } else {
    const auto e = expected.to_vector<int64_t>(), a = actual.to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      if (e[i] != a[i])
        return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs expected " << e[i] << " (in "
                                             << actual.str() << " vs " << expected.str() << ")";
  }
  return ::testing::AssertionSuccess();
}

template <class R>
void expect_same(const R& expected, const R& actual, Tol tol, const std::string& what) {
  if constexpr (std::is_same_v<R, ag::Tensor>) {
    EXPECT_TRUE(same_tensor(expected, actual, tol)) << what;
  } else {  // a tuple or a struct: leaf by leaf
    const std::vector<ag::Tensor> e = ag::tree_leaves(expected), a = ag::tree_leaves(actual);
    ASSERT_EQ(e.size(), a.size()) << what;
    for (size_t i = 0; i < e.size(); ++i) EXPECT_TRUE(same_tensor(e[i], a[i], tol)) << what << " (output " << i << ")";
  }
}

// eager == interpreter == JIT for one call of `fn`; returns the JIT Function's stats.
template <class F, class... Args>
ag::FunctionStats expect_three_way(const std::string& what, F fn, Tol tol, const Args&... args) {
  const auto eager = fn(args...);
  auto interp = ag::function(fn, {.jit_compile = false});
  auto jit = ag::function(fn);
  const auto via_interp = interp(args...);
  const auto via_jit = jit(args...);
  expect_same(eager, via_interp, tol, what + " [interpreter]");
  expect_same(eager, via_jit, tol, what + " [jit]");
  return jit.stats();
}

// The same with FunctionOptions (an input_signature with unknown dims) for both Functions.
template <class F, class... Args>
ag::FunctionStats expect_three_way_with(const std::string& what, F fn, ag::FunctionOptions options, Tol tol,
                                        const Args&... args) {
  const auto eager = fn(args...);
  ag::FunctionOptions interp_options = options;
  interp_options.jit_compile = false;
  auto interp = ag::function(fn, interp_options);
  auto jit = ag::function(fn, options);
  expect_same(eager, interp(args...), tol, what + " [interpreter]");
  expect_same(eager, jit(args...), tol, what + " [jit]");
  return jit.stats();
}

// The JIT's plan of `fn` for `args`, as AG_DUMP writes it (<name>.<sig>.fused.graph.txt): each
// node with its storage and fused group. Empty when the file is missing.
template <class F, class... Args>
std::string fused_plan(F fn, ag::FunctionOptions options, const Args&... args) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / ("agc-fused-plan-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  options.name = "planned" + std::to_string(counter++);
  ag::detail::set_dump_dir(dir.string());
  {
    auto f = ag::function(fn, options);
    f(args...);
  }
  ag::detail::set_dump_dir("");
  std::string text;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with(options.name + ".") && e.path().string().ends_with(".fused.graph.txt")) {
      std::ifstream in(e.path());
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  fs::remove_all(dir);
  return text;
}

// How many times `needle` occurs in `text`.
inline int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The line of `plan` defining the first node whose op is `op` ("Exp" finds "%4 = Exp(...").
inline std::string plan_line(const std::string& plan, const std::string& op) {
  const size_t at = plan.find(" = " + op + "(");
  if (at == std::string::npos) return {};
  const size_t begin = plan.rfind('\n', at) + 1, end = plan.find('\n', at);
  return plan.substr(begin, end - begin);
}

// Calls f(args...) expecting an E whose message contains every needle.
template <class E, class F, class... Args>
void expect_raises(F& f, std::initializer_list<std::string> needles, const Args&... args) {
  try {
    f(args...);
    ADD_FAILURE() << "no error raised";
  } catch (const E& e) {
    for (const std::string& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << " lacks " << n;
  }
}

// Calls f(args...) expecting an ag::InvalidArgumentError whose message contains every needle.
template <class F, class... Args>
void expect_invalid_argument(F& f, std::initializer_list<std::string> needles, const Args&... args) {
  expect_raises<ag::InvalidArgumentError>(f, needles, args...);
}

// The elementwise second derivative of sum(fn(x)) with two nested tapes in the caller's frame
// (inside a trace when the caller is traced): outer.gradient(inner.gradient(sum(fn(x)), x), x).
template <class F>
ag::Tensor nested_tapes_second_derivative(const ag::Tensor& x, F&& fn) {
  ag::GradientTape outer;
  outer.watch(x);
  ag::Tensor dx;
  {
    ag::GradientTape inner;
    inner.watch(x);
    dx = inner.gradient(ag::reduce_sum(fn(x)), x);
  }
  return outer.gradient(dx, x);
}

}  // namespace agtest
