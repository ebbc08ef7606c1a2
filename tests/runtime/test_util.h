// Helpers shared by the runtime tests: error expectations, captured prints and logs,
// deterministic sample data, and reference loops (NumPy broadcasting, row-major indexing)
// written independently of the runtime.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <mutex>

#include "ag/ag.h"
#include "ag/detail/log.h"

namespace agtest {

// Runs `f` and expects an exception of exactly the family E whose message contains every piece.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string_view> pieces, const char* file, int line) {
  ::testing::ScopedTrace trace(file, line, "expected an error here");
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (std::string_view p : pieces)
      EXPECT_NE(msg.find(p), std::string::npos) << "the message lacks \"" << p << "\": " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
    return;
  }
  ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
}

// AG_EXPECT_ERROR(ag::TypeError, a + b, "operator+", "float32", "int32");
#define AG_EXPECT_ERROR(E, stmt, ...) \
  ::agtest::expect_error<E>([&] { (void)(stmt); }, {__VA_ARGS__}, __FILE__, __LINE__)

// Deterministic values: integers in [-range, range], floats with fractional parts.
// `nonzero` avoids 0 (divisors).
template <class T>
std::vector<T> sample(int64_t n, uint64_t seed, bool nonzero = false, int range = 50) {
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 12345;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t k = static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(2 * range + 1)) - range;
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(k) * static_cast<T>(0.25) + static_cast<T>(0.125);  // never 0, exact in float
    } else {
      x = static_cast<T>(k == 0 && nonzero ? 1 : k);
    }
  }
  return v;
}

inline int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * shape[d + 1];
  return st;
}

// Calls f(index) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& shape, F&& f) {
  const int64_t n = count(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// NumPy's broadcast of two shapes (empty result = incompatible).
inline bool broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>& out) {
  const size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

// The flat offset into a tensor of `shape` that output index `idx` (of higher or equal rank)
// reads under broadcasting.
inline int64_t broadcast_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx) {
  const auto st = row_major_strides(shape);
  const size_t lead = idx.size() - shape.size();
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off += (shape[d] == 1 ? 0 : idx[d + lead]) * st[d];
  return off;
}

// Reference elementwise binary op with broadcasting.
template <class R, class T, class F>
std::vector<R> ref_binary(const std::vector<T>& a, const std::vector<int64_t>& sa, const std::vector<T>& b,
                          const std::vector<int64_t>& sb, F&& f, std::vector<int64_t>* out_shape = nullptr) {
  std::vector<int64_t> so;
  if (!broadcast(sa, sb, so)) ADD_FAILURE() << "test bug: shapes do not broadcast";
  std::vector<R> out;
  for_each_index(so, [&](const std::vector<int64_t>& idx) {
    out.push_back(static_cast<R>(f(a[broadcast_offset(sa, idx)], b[broadcast_offset(sb, idx)])));
  });
  if (out_shape) *out_shape = so;
  return out;
}

inline std::vector<int64_t> dims(const ag::Tensor& t) { return t.shape().to_vector(); }

// Element-by-element comparison; floating point within `rel` relative (or `abs_tol` absolute)
// error, NaN equal to NaN.
template <class T>
void expect_values(const ag::Tensor& t, const std::vector<T>& expected, double rel = 0, double abs_tol = 0) {
  ASSERT_EQ(t.dtype(), ag::dtype_of<T>());
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()));
  const T* p = t.data<T>();
  int failures = 0;
  for (size_t i = 0; i < expected.size() && failures < 10; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(expected[i]) && std::isnan(p[i])) continue;
      const double tol = std::max(abs_tol, rel * std::abs(static_cast<double>(expected[i])));
      if (!(std::abs(static_cast<double>(p[i]) - static_cast<double>(expected[i])) <= tol) &&
          !(p[i] == expected[i])) {
        ADD_FAILURE() << "element " << i << ": got " << p[i] << ", expected " << expected[i];
        ++failures;
      }
    } else {
      if (p[i] != expected[i]) {
        ADD_FAILURE() << "element " << i << ": got " << +p[i] << ", expected " << +expected[i];
        ++failures;
      }
    }
  }
}

template <class T>
ag::Tensor make(const std::vector<T>& v, const std::vector<int64_t>& shape) {
  return ag::constant(v, ag::Shape(shape));
}

using NumericTypes = ::testing::Types<int32_t, int64_t, float, double>;
using FloatTypes = ::testing::Types<float, double>;
using IntTypes = ::testing::Types<int32_t, int64_t>;

// Captures every ag::print line while alive.
class PrintCapture {
 public:
  PrintCapture() {
    ag::set_print_sink([this](std::string_view s) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(s);
    });
  }
  ~PrintCapture() { ag::set_print_sink(nullptr); }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::string text() const {
    std::string t;
    for (const auto& l : lines()) t += l;
    return t;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Captures warnings and AG_LOG lines while alive; optionally enables log topics.
class LogCapture {
 public:
  explicit LogCapture(unsigned topics = 0) {
    ag::detail::set_log_topics(topics);
    ag::set_log_sink([this](std::string_view s) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(s);
    });
  }
  ~LogCapture() {
    ag::set_log_sink(nullptr);
    ag::detail::set_log_topics(0);
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  size_t count_containing(const std::string& needle) const {
    size_t n = 0;
    for (const auto& l : lines()) n += l.find(needle) != std::string::npos;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Runs f, expects an exception of type E whose message contains every needle (no location).
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
    return;
  }
  ADD_FAILURE() << "expected an exception of type " << typeid(E).name();
}

// Same dtype, shape and bytes (floats compared bit for bit: -0 != +0, NaN == same NaN).
inline bool same_bits(const ag::Tensor& a, const ag::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(ag::detail::impl_of(a)->data, ag::detail::impl_of(b)->data, static_cast<size_t>(a.num_elements()) * ag::dtype_size(a.dtype())) == 0;
}

inline std::vector<int64_t> ints(const ag::Tensor& t) { return t.to_vector<int64_t>(); }
inline std::vector<double> doubles(const ag::Tensor& t) { return t.to_vector<double>(); }

inline ag::FunctionOptions interpreted() {
  ag::FunctionOptions o;
  o.jit_compile = false;
  return o;
}

// How many nodes of `op` graph g has, counting inside If/While sub-graphs.
inline size_t count_op(const ag::Graph& g, ag::OpKind op) {
  size_t n = 0;
  for (const auto& node : g.nodes) {
    n += node.op == op;
    for (const auto& sub : node.subgraphs) n += count_op(*sub, op);
  }
  return n;
}

}  // namespace agtest
