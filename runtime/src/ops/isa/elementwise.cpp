// Elementwise kernels: unary, binary arithmetic, comparisons, logical ops, select and cast,
// with NumPy broadcasting that never materializes the broadcast operand.
#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>

#include "../broadcast.h"
#include "ieee_min_max.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {

namespace {

template <class T>
using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using Out = Eigen::Map<Arr<T>, Eigen::Aligned16>;
template <class T>
using In = Eigen::Map<const Arr<T>>;

template <class T>
const T* ptr(const Tensor& t) {
  return static_cast<const T*>(detail::impl_of(t)->data);
}
template <class T>
T* mut(Tensor& t) {
  return static_cast<T*>(detail::impl_of(t)->data);
}

[[noreturn]] void division_by_zero(OpKind op, SourceLoc loc) {
  throw InvalidArgumentError(fmt::format("{}: integer division by zero{}", user_op_name(op), at(loc)));
}

// ---- unary ----

// Eigen 3.4's vectorized exp clamps its argument below at about -88.7 (float) and -709.8
// (double), so results that underflow to denormals or to 0 come out as the clamp's result
// (exp(-inf) = 2.9e-39 in float32); its AVX-512 float exp overflows to inf from about 88.7,
// short of the largest finite result (exp(88.72) = 3.39e38); its log treats denormal inputs as
// the smallest normal. The elements in those ranges — rare, and found by a loop that
// vectorizes — are recomputed with <cmath>, which is exact there. The other ranges keep Eigen's
// few-ULP vector code (tests/common/special_values.h checks every range at every ISA level).
template <class T>
constexpr T kExpVectorLow = sizeof(T) == 4 ? T(-88.0) : T(-708.0);
template <class T>
constexpr T kExpVectorHigh = sizeof(T) == 4 ? T(88.0) : T(709.0);

// x and y must not overlap (the fix-up reads x after y is written).
template <class T>
void exp_into(const T* x, T* y, int64_t n) {
  Eigen::Map<Arr<T>>(y, n) = In<T>(x, n).exp();
  for (int64_t i = 0; i < n; ++i)
    if (x[i] < kExpVectorLow<T> || x[i] > kExpVectorHigh<T>) [[unlikely]] y[i] = std::exp(x[i]);
}

template <class T>
void log_into(const T* x, T* y, int64_t n) {
  Eigen::Map<Arr<T>>(y, n) = In<T>(x, n).log();
  for (int64_t i = 0; i < n; ++i)
    if (x[i] > T(0) && x[i] < std::numeric_limits<T>::min()) [[unlikely]] y[i] = std::log(x[i]);
}

// y = e^-|x|, with the clamp's range fixed up (sigmoid and softplus build on it).
template <class T>
void exp_neg_abs_into(const T* x, T* y, int64_t n) {
  Eigen::Map<Arr<T>>(y, n) = (-In<T>(x, n).abs()).exp();
  for (int64_t i = 0; i < n; ++i)
    if (-std::abs(x[i]) < kExpVectorLow<T>) [[unlikely]] y[i] = std::exp(-std::abs(x[i]));
}

// sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0, with e^-|x| computed
// once: within a few ULPs everywhere, denormal results included (Eigen's float logistic is a
// fast approximation, 500+ ULPs off for x < -9, and 1 / (1 + e^-x) overflows to 0 below -88).
template <class T>
void sigmoid_into(const T* x, T* y, int64_t n) {
  In<T> a(x, n);
  Eigen::Map<Arr<T>> e(y, n);
  exp_neg_abs_into(x, y, n);
  e = (a >= T(0)).select(T(1) / (T(1) + e), e / (T(1) + e));
}

// softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, and the
// denormal results of very negative x through exp's fix-up. NaN propagates.
template <class T>
void softplus_into(const T* x, T* y, int64_t n) {
  In<T> a(x, n);
  Eigen::Map<Arr<T>> e(y, n);
  exp_neg_abs_into(x, y, n);
  e = a.max(T(0)) + e.log1p();
  for (int64_t i = 0; i < n; ++i)
    if (x[i] != x[i]) [[unlikely]] y[i] = x[i];
}

// y[i] = f(x[i]) for a libm function f.
template <class T, class F>
void map_libm(const T* x, T* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class T>
void unary_float(OpKind op, const T* x, T* y, int64_t n) {
  In<T> a(x, n);
  Eigen::Map<Arr<T>> b(y, n);
  switch (op) {
    case OpKind::Exp: exp_into(x, y, n); break;
    case OpKind::Log: log_into(x, y, n); break;
    // Not Eigen's sqrt: with EIGEN_FAST_MATH its AVX-512 version is an rsqrt approximation that
    // turns +inf into NaN. std::sqrt is exact and vectorizes (vsqrtps), like the JIT's llvm.sqrt.
    case OpKind::Sqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
      break;
    case OpKind::Tanh: b = a.tanh(); break;
    case OpKind::Sigmoid: sigmoid_into(x, y, n); break;
    case OpKind::Softplus: softplus_into(x, y, n); break;
    case OpKind::Sin: b = a.sin(); break;
    case OpKind::Cos: b = a.cos(); break;
    // libm's, as compiled code calls it in a scalar loop (vector loops call libmvec's variants,
    // within a few ULPs: docs/jit.md, "Transcendental functions").
    case OpKind::Erf: map_libm(x, y, n, [](T v) { return std::erf(v); }); break;
    case OpKind::Erfc: map_libm(x, y, n, [](T v) { return std::erfc(v); }); break;
    case OpKind::Log1p: map_libm(x, y, n, [](T v) { return std::log1p(v); }); break;
    case OpKind::Expm1: map_libm(x, y, n, [](T v) { return std::expm1(v); }); break;
    case OpKind::Tan: map_libm(x, y, n, [](T v) { return std::tan(v); }); break;
    case OpKind::Atan: map_libm(x, y, n, [](T v) { return std::atan(v); }); break;
    case OpKind::Asin: map_libm(x, y, n, [](T v) { return std::asin(v); }); break;
    case OpKind::Acos: map_libm(x, y, n, [](T v) { return std::acos(v); }); break;
    case OpKind::Sinh: map_libm(x, y, n, [](T v) { return std::sinh(v); }); break;
    case OpKind::Cosh: map_libm(x, y, n, [](T v) { return std::cosh(v); }); break;
    case OpKind::Asinh: map_libm(x, y, n, [](T v) { return std::asinh(v); }); break;
    case OpKind::Acosh: map_libm(x, y, n, [](T v) { return std::acosh(v); }); break;
    case OpKind::Atanh: map_libm(x, y, n, [](T v) { return std::atanh(v); }); break;
    // 1 / sqrt, both correctly rounded (not the rsqrt instruction's 12-bit estimate).
    case OpKind::Rsqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = T(1) / std::sqrt(x[i]);
      break;
    case OpKind::Floor: b = a.floor(); break;
    case OpKind::Ceil: b = a.ceil(); break;
    case OpKind::Round: b = a.rint(); break;  // half to even
    default: throw InternalError("unary_float: " + std::string(op_name(op)));
  }
}

template <class T>
void unary_numeric(OpKind op, const T* x, T* y, int64_t n) {
  In<T> a(x, n);
  Eigen::Map<Arr<T>> b(y, n);
  switch (op) {
    case OpKind::Identity:
    case OpKind::StopGradient: b = a; break;
    case OpKind::Neg:
      if constexpr (std::is_integral_v<T>)  // wraps like the JIT (no signed-overflow UB)
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x[i]));
      else b = -a;
      break;
    case OpKind::Abs:
      if constexpr (std::is_integral_v<T>)
        for (int64_t i = 0; i < n; ++i)
          y[i] = x[i] < 0 ? static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x[i])) : x[i];
      else b = a.abs();
      break;
    case OpKind::Square:
      if constexpr (std::is_integral_v<T>)
        for (int64_t i = 0; i < n; ++i) {
          using U = std::make_unsigned_t<T>;
          y[i] = static_cast<T>(static_cast<U>(x[i]) * static_cast<U>(x[i]));
        }
      else b = a.square();
      break;
    case OpKind::Relu: b = (a < T(0)).select(T(0), a); break;
    case OpKind::Sign: b = a.sign(); break;
    default:
      if constexpr (std::is_floating_point_v<T>) unary_float(op, x, y, n);
      else throw InternalError("unary_numeric: " + std::string(op_name(op)));
  }
}

// ---- binary ----

// Below this many elements per row, Eigen's alignment prologue and packet loop cost more than
// the row itself: small rows (the eager dispatch case) take a scalar loop.
constexpr int64_t kSmallRow = 16;
// Planes of short rows up to this many elements go through a table of offsets (binary_rows).
constexpr int64_t kPlaneTable = 256;

// Row loop with Eigen expressions: f(x, y) gets Eigen arrays (maps, or constants for broadcast
// operands) and returns an expression assigned to the output row. f must also accept two
// scalars (the small-row path). Inner strides are 1 or 0 (broadcast).
template <class T, class R, class F>
void binary_rows(const BroadcastLoop& L, const T* a, const T* b, R* out, F&& f) {
  const int64_t n = L.inner();
  const int64_t sa = L.inner_stride(0), sb = L.inner_stride(1);
  if (n < kSmallRow) {  // a plane of short rows per step of the walk ([N,1,2] - [1,8,2])
    const int ra = L.rank >= 2 ? L.rank - 2 : 0;
    const int64_t pa = L.rank >= 2 ? L.strides[0][ra] : 0, pb = L.rank >= 2 ? L.strides[1][ra] : 0;
    const int64_t plane = (L.rank >= 2 ? L.dims[ra] : 1) * n;
    if (plane <= kPlaneTable) {
      // Every plane reads its operands at the same offsets from its own: a table of them, made
      // once, and one loop over the plane's elements. The two nested loops of runtime trip
      // counts (8 rows of 2) cost 1.5 ns an element, k-means' distances 2.5 ms a step.
      int64_t ta[kPlaneTable], tb[kPlaneTable];
      for (int64_t k = 0; k < plane; ++k) ta[k] = k / n * pa + k % n * sa, tb[k] = k / n * pb + k % n * sb;
      for_each_plane(L, [&](int64_t o, const int64_t* off, int64_t) {
        const T* xa = a + off[0];
        const T* xb = b + off[1];
        R* y = out + o;
        for (int64_t k = 0; k < plane; ++k) y[k] = static_cast<R>(f(xa[ta[k]], xb[tb[k]]));
      });
      return;
    }
    for_each_plane(L, [&](int64_t o, const int64_t* off, int64_t rows) {
      for (int64_t j = 0; j < rows; ++j)
        for (int64_t i = 0; i < n; ++i)
          out[o + j * n + i] = static_cast<R>(f(a[off[0] + j * pa + i * sa], b[off[1] + j * pb + i * sb]));
    });
    return;
  }
  for_each_row(L, [&](int64_t o, const int64_t* off) {
    Eigen::Map<Arr<R>> y(out + o, n);
    if (sa && sb) y = f(In<T>(a + off[0], n), In<T>(b + off[1], n));
    else if (sb) y = f(Arr<T>::Constant(n, a[off[0]]), In<T>(b + off[1], n));
    else if (sa) y = f(In<T>(a + off[0], n), Arr<T>::Constant(n, b[off[1]]));
    else y = f(Arr<T>::Constant(n, a[off[0]]), Arr<T>::Constant(n, b[off[1]]));
  });
}

// Row loop applying a scalar function (integer arithmetic, comparisons, logical ops). One loop
// per stride pattern, so that the compiler sees unit strides and vectorizes.
template <class T, class R, class F>
void binary_scalar(const BroadcastLoop& L, const T* a, const T* b, R* out, F&& f) {
  const int64_t n = L.inner();
  const int64_t sa = L.inner_stride(0), sb = L.inner_stride(1);
  for_each_row(L, [&](int64_t o, const int64_t* off) {
    const T* pa = a + off[0];
    const T* pb = b + off[1];
    R* y = out + o;
    if (sa && sb) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(pa[i], pb[i]);
    } else if (sb) {
      const T x = *pa;
      for (int64_t i = 0; i < n; ++i) y[i] = f(x, pb[i]);
    } else if (sa) {
      const T z = *pb;
      for (int64_t i = 0; i < n; ++i) y[i] = f(pa[i], z);
    } else {
      const R v = f(*pa, *pb);
      for (int64_t i = 0; i < n; ++i) y[i] = v;
    }
  });
}

// maximum/minimum on Eigen arrays or on scalars (ieee_min_max.h).
template <bool kMax>
struct ArrayMaxMin {
  template <class X, class Z>
  auto operator()(const X& x, const Z& z) const {
    if constexpr (std::is_arithmetic_v<X>) return IeeeMaxMin<kMax>()(x, z);
    else return x.binaryExpr(z, IeeeMaxMin<kMax>());
  }
};

template <class T>
T int_pow(T base, T exp, SourceLoc loc) {
  if (exp < 0)
    throw InvalidArgumentError(fmt::format("ag::pow: integers to negative integer powers are not allowed{}", at(loc)));
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  for (T e = exp; e > 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T>
void binary_int(OpKind op, const BroadcastLoop& L, const Tensor& ta, const Tensor& tb, Tensor& out, SourceLoc loc) {
  const T* a = ptr<T>(ta);
  const T* b = ptr<T>(tb);
  T* y = mut<T>(out);
  using U = std::make_unsigned_t<T>;
  const bool divides = op == OpKind::Div || op == OpKind::Mod || op == OpKind::FloorDiv || op == OpKind::FloorMod;
  if (divides) {
    const int64_t nb = tb.num_elements();
    if (out.num_elements() > 0)
      for (int64_t i = 0; i < nb; ++i)
        if (b[i] == 0) division_by_zero(op, loc);
  }
  switch (op) {
    case OpKind::Add: binary_scalar(L, a, b, y, [](T x, T z) { return static_cast<T>(U(x) + U(z)); }); break;
    case OpKind::Sub: binary_scalar(L, a, b, y, [](T x, T z) { return static_cast<T>(U(x) - U(z)); }); break;
    case OpKind::Mul: binary_scalar(L, a, b, y, [](T x, T z) { return static_cast<T>(U(x) * U(z)); }); break;
    case OpKind::Maximum: binary_rows(L, a, b, y, ArrayMaxMin<true>()); break;
    case OpKind::Minimum: binary_rows(L, a, b, y, ArrayMaxMin<false>()); break;
    // x / -1 and x % -1 are spelled out: INT_MIN / -1 traps on x86.
    case OpKind::Div:
      binary_scalar(L, a, b, y, [](T x, T z) { return z == -1 ? static_cast<T>(U(0) - U(x)) : static_cast<T>(x / z); });
      break;
    case OpKind::Mod: binary_scalar(L, a, b, y, [](T x, T z) { return z == -1 ? T(0) : static_cast<T>(x % z); }); break;
    case OpKind::FloorDiv:
      binary_scalar(L, a, b, y, [](T x, T z) {
        if (z == -1) return static_cast<T>(U(0) - U(x));
        T q = x / z;
        return (x % z != 0 && ((x < 0) != (z < 0))) ? static_cast<T>(q - 1) : q;
      });
      break;
    case OpKind::FloorMod:
      binary_scalar(L, a, b, y, [](T x, T z) {
        if (z == -1) return T(0);
        T r = x % z;
        return (r != 0 && ((r < 0) != (z < 0))) ? static_cast<T>(r + z) : r;
      });
      break;
    case OpKind::Pow: binary_scalar(L, a, b, y, [loc](T x, T z) { return int_pow(x, z, loc); }); break;
    default: throw InternalError("binary_int: " + std::string(op_name(op)));
  }
}

template <class T>
void binary_float(OpKind op, const BroadcastLoop& L, const T* a, const T* b, T* y) {
  switch (op) {
    case OpKind::Add: binary_rows(L, a, b, y, [](auto&& x, auto&& z) { return x + z; }); break;
    case OpKind::Sub: binary_rows(L, a, b, y, [](auto&& x, auto&& z) { return x - z; }); break;
    case OpKind::Mul: binary_rows(L, a, b, y, [](auto&& x, auto&& z) { return x * z; }); break;
    case OpKind::Div: binary_rows(L, a, b, y, [](auto&& x, auto&& z) { return x / z; }); break;
    case OpKind::Pow: binary_scalar(L, a, b, y, [](T x, T z) { return std::pow(x, z); }); break;
    case OpKind::Atan2: binary_scalar(L, a, b, y, [](T x, T z) { return std::atan2(x, z); }); break;
    case OpKind::Maximum: binary_rows(L, a, b, y, ArrayMaxMin<true>()); break;
    case OpKind::Minimum: binary_rows(L, a, b, y, ArrayMaxMin<false>()); break;
    case OpKind::Mod: binary_scalar(L, a, b, y, [](T x, T z) { return std::fmod(x, z); }); break;
    case OpKind::FloorDiv: binary_scalar(L, a, b, y, [](T x, T z) { return std::floor(x / z); }); break;
    case OpKind::FloorMod:
      binary_scalar(L, a, b, y, [](T x, T z) {
        T r = std::fmod(x, z);
        return (r != 0 && ((r < 0) != (z < 0))) ? r + z : r;
      });
      break;
    default: throw InternalError("binary_float: " + std::string(op_name(op)));
  }
}

template <class T>
void compare(OpKind op, const BroadcastLoop& L, const T* a, const T* b, bool* y) {
  switch (op) {
    case OpKind::Less: binary_scalar(L, a, b, y, [](T x, T z) { return x < z; }); break;
    case OpKind::LessEqual: binary_scalar(L, a, b, y, [](T x, T z) { return x <= z; }); break;
    case OpKind::Greater: binary_scalar(L, a, b, y, [](T x, T z) { return x > z; }); break;
    case OpKind::GreaterEqual: binary_scalar(L, a, b, y, [](T x, T z) { return x >= z; }); break;
    case OpKind::Equal: binary_scalar(L, a, b, y, [](T x, T z) { return x == z; }); break;
    case OpKind::NotEqual: binary_scalar(L, a, b, y, [](T x, T z) { return x != z; }); break;
    default: throw InternalError("compare: " + std::string(op_name(op)));
  }
}

template <class From>
void cast_from(const Tensor& x, Tensor& y) {
  const From* src = ptr<From>(x);
  const int64_t n = x.num_elements();
  visit_dtype(y.dtype(), [&](auto tag) {
    using To = decltype(tag);
    To* dst = mut<To>(y);
    if constexpr (is_half_float_v<From> || is_half_float_v<To> ||
                  (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>)) {
      // saturating, NaN -> 0; 16-bit floats through float32
      for (int64_t i = 0; i < n; ++i) dst[i] = convert_value<To>(src[i]);
    } else if constexpr (std::is_same_v<To, bool>) {
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i] != From(0);
    } else {
      Eigen::Map<Arr<To>>(dst, n) = In<From>(src, n).template cast<To>();
    }
  });
}

BroadcastLoop plan(const TensorType& out, std::span<const Tensor> in) {
  const Shape* shapes[BroadcastLoop::kMaxInputs];
  for (size_t k = 0; k < in.size(); ++k) shapes[k] = &in[k].shape();
  return plan_broadcast(out.shape, shapes, static_cast<int>(in.size()));
}

}  // namespace

void elementwise_into(OpKind op, std::span<const Tensor> in, const TensorType& type, Tensor& out, SourceLoc loc) {
  const int64_t n = out.num_elements();
  switch (op_class(op)) {
    case OpClass::Unary:
    case OpClass::UnaryFloat:
      if (op == OpKind::Identity || op == OpKind::StopGradient) {  // any dtype, storage ones too
        std::memcpy(mut<char>(out), ptr<char>(in[0]), static_cast<size_t>(n) * dtype_size(out.dtype()));
        return;
      }
      visit_compute_dtype(in[0].dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
          if (op != OpKind::Identity && op != OpKind::StopGradient) throw InternalError("unary op on bool");
          std::copy_n(ptr<bool>(in[0]), n, mut<bool>(out));
        } else {
          unary_numeric<T>(op, ptr<T>(in[0]), mut<T>(out), n);
        }
      });
      return;
    case OpClass::UnaryBool: {
      const bool* x = ptr<bool>(in[0]);
      bool* y = mut<bool>(out);
      for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
      return;
    }
    case OpClass::Cast:
      visit_dtype(in[0].dtype(), [&](auto tag) { cast_from<decltype(tag)>(in[0], out); });
      return;
    case OpClass::Binary: {
      const BroadcastLoop L = plan(type, in);
      visit_compute_dtype(type.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) binary_float<T>(op, L, ptr<T>(in[0]), ptr<T>(in[1]), mut<T>(out));
        else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) binary_int<T>(op, L, in[0], in[1], out, loc);
        else throw InternalError("binary op on bool");
      });
      return;
    }
    case OpClass::Compare: {
      const BroadcastLoop L = plan(type, in);
      visit_compute_dtype(in[0].dtype(), [&](auto tag) {
        using T = decltype(tag);
        compare<T>(op, L, ptr<T>(in[0]), ptr<T>(in[1]), mut<bool>(out));
      });
      return;
    }
    case OpClass::Logical: {
      const BroadcastLoop L = plan(type, in);
      const bool* a = ptr<bool>(in[0]);
      const bool* b = ptr<bool>(in[1]);
      bool* y = mut<bool>(out);
      switch (op) {
        case OpKind::LogicalAnd: binary_scalar(L, a, b, y, [](bool x, bool z) { return x && z; }); break;
        case OpKind::LogicalOr: binary_scalar(L, a, b, y, [](bool x, bool z) { return x || z; }); break;
        default: binary_scalar(L, a, b, y, [](bool x, bool z) { return x != z; }); break;
      }
      return;
    }
    case OpClass::Select: {
      const BroadcastLoop L = plan(type, in);
      const bool* c = ptr<bool>(in[0]);
      visit_dtype(type.dtype, [&](auto tag) {
        using T = decltype(tag);
        const T* a = ptr<T>(in[1]);
        const T* b = ptr<T>(in[2]);
        T* y = mut<T>(out);
        const int64_t len = L.inner();
        const int64_t sc = L.inner_stride(0), sa = L.inner_stride(1), sb = L.inner_stride(2);
        for_each_row(L, [&](int64_t o, const int64_t* off) {
          for (int64_t i = 0; i < len; ++i)
            y[o + i] = c[off[0] + i * sc] ? a[off[1] + i * sa] : b[off[2] + i * sb];
        });
      });
      return;
    }
    default: throw InternalError("elementwise_kernel: " + std::string(op_name(op)));
  }
}

}  // namespace ag::detail::AG_KERNEL_NS
