// Accuracy of the JIT's vectorized transcendentals (glibc libmvec through LLVM's vectorizer: exp,
// log, sin, cos, pow and every libm-backed op — erf, log1p, the inverse and hyperbolic functions,
// sigmoid as 1 / (1 + exp(-x)), float32 tanh as a rational approximation): max error in ULPs against a higher-precision reference over a
// sweep, checked against the bounds documented in docs/jit.md. Also checks that the optimized IR
// really calls the vector variants.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "jit_test_util.h"

namespace {

template <class T>
double ulps(T got, long double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e30;
  if (std::isinf(ref)) return static_cast<long double>(got) == ref ? 0 : 1e30;
  const T r = static_cast<T>(ref);
  const T a = std::abs(r);
  T spacing = std::nextafter(a, std::numeric_limits<T>::infinity()) - a;
  if (spacing == 0 || !std::isfinite(spacing)) spacing = std::numeric_limits<T>::denorm_min();
  return static_cast<double>(std::abs(static_cast<long double>(got) - ref) / static_cast<long double>(spacing));
}

struct Sweep {
  const char* name;
  std::function<ag::Tensor(ag::Tensor, ag::Tensor)> op;
  std::function<long double(long double, long double)> ref;
  double lo, hi;      // x range (log-spaced when lo > 0 and hi / lo > 1e3)
  double ylo, yhi;    // second operand range (pow)
  double bound_f32;   // documented max ULP
  double bound_f64;
};

std::vector<Sweep> sweeps() {
  return {
      {"exp", [](ag::Tensor x, ag::Tensor) { return ag::exp(x); }, [](long double x, long double) { return std::exp(x); }, -87, 88, 0, 0, 4, 4},
      {"log", [](ag::Tensor x, ag::Tensor) { return ag::log(x); }, [](long double x, long double) { return std::log(x); }, 1e-30, 1e30, 0, 0, 4, 4},
      {"tanh", [](ag::Tensor x, ag::Tensor) { return ag::tanh(x); }, [](long double x, long double) { return std::tanh(x); }, -9, 9, 0, 0, 6, 4},  // float32: 4.5 with FMA, 5.5 without (x86-64-v2)
      {"sigmoid", [](ag::Tensor x, ag::Tensor) { return ag::sigmoid(x); },
       [](long double x, long double) { return 1.0L / (1.0L + std::exp(-x)); }, -80, 30, 0, 0, 6, 6},
      {"softplus", [](ag::Tensor x, ag::Tensor) { return ag::softplus(x); },
       [](long double x, long double) { return std::max(x, 0.0L) + std::log1p(std::exp(-std::fabs(x))); }, -90, 90, 0, 0, 5, 4},
      {"sin", [](ag::Tensor x, ag::Tensor) { return ag::sin(x); }, [](long double x, long double) { return std::sin(x); }, -100, 100, 0, 0, 4, 4},
      {"cos", [](ag::Tensor x, ag::Tensor) { return ag::cos(x); }, [](long double x, long double) { return std::cos(x); }, -100, 100, 0, 0, 4, 4},
      {"pow", [](ag::Tensor x, ag::Tensor y) { return ag::pow(x, y); }, [](long double x, long double y) { return std::pow(x, y); }, 0.01, 100, -4, 4, 4, 4},
      {"erf", [](ag::Tensor x, ag::Tensor) { return ag::erf(x); }, [](long double x, long double) { return std::erf(x); }, -6, 6, 0, 0, 4, 4},
      {"erfc", [](ag::Tensor x, ag::Tensor) { return ag::erfc(x); }, [](long double x, long double) { return std::erfc(x); }, -5, 9, 0, 0, 4, 4},
      {"log1p", [](ag::Tensor x, ag::Tensor) { return ag::log1p(x); }, [](long double x, long double) { return std::log1p(x); }, -0.999, 1000.0, 0, 0, 4, 4},
      {"expm1", [](ag::Tensor x, ag::Tensor) { return ag::expm1(x); }, [](long double x, long double) { return std::expm1(x); }, -20, 80, 0, 0, 4, 4},
      {"tan", [](ag::Tensor x, ag::Tensor) { return ag::tan(x); }, [](long double x, long double) { return std::tan(x); }, -3, 3, 0, 0, 4, 4},
      {"atan", [](ag::Tensor x, ag::Tensor) { return ag::atan(x); }, [](long double x, long double) { return std::atan(x); }, -100, 100, 0, 0, 4, 4},
      {"asin", [](ag::Tensor x, ag::Tensor) { return ag::asin(x); }, [](long double x, long double) { return std::asin(x); }, -1, 1, 0, 0, 4, 4},
      {"acos", [](ag::Tensor x, ag::Tensor) { return ag::acos(x); }, [](long double x, long double) { return std::acos(x); }, -1, 1, 0, 0, 4, 4},
      {"sinh", [](ag::Tensor x, ag::Tensor) { return ag::sinh(x); }, [](long double x, long double) { return std::sinh(x); }, -80, 80, 0, 0, 4, 4},
      {"cosh", [](ag::Tensor x, ag::Tensor) { return ag::cosh(x); }, [](long double x, long double) { return std::cosh(x); }, -80, 80, 0, 0, 4, 4},
      {"asinh", [](ag::Tensor x, ag::Tensor) { return ag::asinh(x); }, [](long double x, long double) { return std::asinh(x); }, -10000.0, 10000.0, 0, 0, 4, 4},
      {"acosh", [](ag::Tensor x, ag::Tensor) { return ag::acosh(x); }, [](long double x, long double) { return std::acosh(x); }, 1, 10000.0, 0, 0, 4, 4},
      {"atanh", [](ag::Tensor x, ag::Tensor) { return ag::atanh(x); }, [](long double x, long double) { return std::atanh(x); }, -1, 1, 0, 0, 4, 4},
      {"atan2", [](ag::Tensor x, ag::Tensor y) { return ag::atan2(x, y); }, [](long double x, long double y) { return std::atan2(x, y); }, -10, 10, -10, 10, 4, 4},
  };
}

template <class T>
double max_ulps(const Sweep& s, int n, std::string* ir) {
  std::vector<T> xs(static_cast<size_t>(n)), ys(static_cast<size_t>(n));
  const bool logspace = s.lo > 0 && s.hi / s.lo > 1e3;
  for (int i = 0; i < n; ++i) {
    const double t = (i + 0.5) / n;
    xs[i] = static_cast<T>(logspace ? s.lo * std::pow(s.hi / s.lo, t) : s.lo + (s.hi - s.lo) * t);
    ys[i] = static_cast<T>(s.ylo + (s.yhi - s.ylo) * std::fmod(t * 7919.0, 1.0));
  }
  const ag::Tensor x = ag::constant(xs, {n}), y = ag::constant(ys, {n});
  auto f = ag::function(s.op);
  const std::vector<T> got = f(x, y).template to_vector<T>();
  if (ir) *ir = f.get_concrete_function(x, y).llvm_ir(true);
  double worst = 0;
  for (int i = 0; i < n; ++i) worst = std::max(worst, ulps<T>(got[i], s.ref(xs[i], ys[i])));
  return worst;
}

TEST(JitAccuracy, TranscendentalsWithinDocumentedUlps) {
  constexpr int kPoints = 1 << 18;
  for (const Sweep& s : sweeps()) {
    std::string ir;
    const double e32 = max_ulps<float>(s, kPoints, &ir);
    const double e64 = max_ulps<double>(s, kPoints, nullptr);
    std::printf("accuracy: %-8s float32 max %.2f ulp (bound %.0f)   float64 max %.2f ulp (bound %.0f)\n", s.name, e32,
                s.bound_f32, e64, s.bound_f64);
    EXPECT_LE(e32, s.bound_f32) << s.name;
    EXPECT_LE(e64, s.bound_f64) << s.name;
    // The loop was vectorized: with libmvec's variants of the target's width (_ZGVbN4v_expf for
    // SSE, _ZGVdN8v_expf for AVX2, _ZGVeN16v_expf for AVX-512), or for float32 tanh (a rational
    // approximation in IR) with vector arithmetic. Code for x86-64-v2 calls no wider variant.
    const bool rational = std::string(s.name) == "tanh";
    const bool sse_only = ag::jit_target_cpu() == "x86-64-v2";
    if (rational) {
      EXPECT_NE(ir.find("fdiv <"), std::string::npos) << s.name << ": not vectorized";
    } else if (sse_only) {
      EXPECT_TRUE(agtest::ir_calls(ir, "_ZGVbN4")) << s.name << ": not vectorized with SSE variants";
    } else {
      EXPECT_TRUE(agtest::ir_calls(ir, "_ZGVdN8") || agtest::ir_calls(ir, "_ZGVeN16")) << s.name << ": not vectorized with AVX2 or AVX-512 variants";
    }
    if (sse_only) {
      EXPECT_FALSE(agtest::ir_calls(ir, "_ZGVd")) << s.name << ": calls an AVX2 variant in x86-64-v2 code";
      EXPECT_FALSE(agtest::ir_calls(ir, "_ZGVe")) << s.name << ": calls an AVX-512 variant in x86-64-v2 code";
    }
  }
}

}  // namespace
