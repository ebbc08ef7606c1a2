// Reductions over every axis combination (contiguous or not, negative axes, keepdims, no axes,
// all axes), empty dims and NaN; argmax/argmin incl. ties; against a reference loop.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;
using agtest::make;

enum class Red { Sum, Mean, Max, Min, Prod };

// Reference: accumulates in long double over the input in row-major order.
template <class T>
std::vector<T> ref_reduce(const std::vector<T>& x, const Dims& shape, const std::vector<bool>& reduced, Red op,
                          Dims& out_shape, bool keepdims) {
  out_shape.clear();
  Dims kept;  // output shape without keepdims
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) kept.push_back(shape[d]);
    if (!reduced[d] || keepdims) out_shape.push_back(reduced[d] ? 1 : shape[d]);
  }
  const int64_t n_out = agtest::count(kept);
  int64_t group = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) group *= shape[d];
  std::vector<long double> acc(static_cast<size_t>(n_out));
  std::vector<bool> nan(static_cast<size_t>(n_out), false);
  long double init = 0;
  if (op == Red::Prod) init = 1;
  if (op == Red::Max)
    init = std::numeric_limits<T>::has_infinity ? -static_cast<long double>(std::numeric_limits<T>::infinity())
                                                : std::numeric_limits<T>::lowest();
  if (op == Red::Min)
    init = std::numeric_limits<T>::has_infinity ? static_cast<long double>(std::numeric_limits<T>::infinity())
                                                : std::numeric_limits<T>::max();
  std::fill(acc.begin(), acc.end(), init);
  // Integer sums and products wrap (two's complement), like the runtime's integer kernels.
  std::vector<uint64_t> wrapped(static_cast<size_t>(n_out), op == Red::Prod ? 1 : 0);
  const auto kst = agtest::row_major_strides(kept);
  int64_t flat = 0;
  agtest::for_each_index(shape, [&](const Dims& idx) {
    int64_t o = 0;
    for (size_t d = 0, k = 0; d < shape.size(); ++d)
      if (!reduced[d]) o += idx[d] * kst[k++];
    const long double v = x[static_cast<size_t>(flat++)];
    if (std::isnan(v)) nan[o] = true;
    if constexpr (std::is_integral_v<T>) {
      if (op == Red::Sum || op == Red::Mean) wrapped[o] += static_cast<uint64_t>(static_cast<int64_t>(v));
      if (op == Red::Prod) wrapped[o] *= static_cast<uint64_t>(static_cast<int64_t>(v));
    }
    switch (op) {
      case Red::Sum:
      case Red::Mean: acc[o] += v; break;
      case Red::Prod: acc[o] *= v; break;
      case Red::Max: acc[o] = std::max(acc[o], v); break;
      case Red::Min: acc[o] = std::min(acc[o], v); break;
    }
  });
  std::vector<T> out;
  for (int64_t o = 0; o < n_out; ++o) {
    long double v = acc[o];
    if constexpr (std::is_integral_v<T>) {
      const T w = static_cast<T>(wrapped[o]);  // modular, as C++20 defines it
      if (op == Red::Sum || op == Red::Prod) {
        out.push_back(w);
        continue;
      }
      if (op == Red::Mean) {
        out.push_back(group ? static_cast<T>(w / group) : T(0));
        continue;
      }
    } else {
      if (op == Red::Mean) v = v / group;
      if (nan[o]) v = std::numeric_limits<long double>::quiet_NaN();
    }
    out.push_back(static_cast<T>(v));
  }
  return out;
}

ag::Tensor apply(Red op, const ag::Tensor& x, ag::Axes axes, bool keepdims) {
  switch (op) {
    case Red::Sum: return ag::reduce_sum(x, axes, keepdims);
    case Red::Mean: return ag::reduce_mean(x, axes, keepdims);
    case Red::Max: return ag::reduce_max(x, axes, keepdims);
    case Red::Min: return ag::reduce_min(x, axes, keepdims);
    case Red::Prod: return ag::reduce_prod(x, axes, keepdims);
  }
  return {};
}

template <class T>
class Reduce : public ::testing::Test {};
TYPED_TEST_SUITE(Reduce, agtest::NumericTypes);

template <class T>
void check_all_axis_subsets(const Dims& shape, const std::vector<T>& x, double rel) {
  const ag::Tensor t = make(x, shape);
  const int rank = static_cast<int>(shape.size());
  for (Red op : {Red::Sum, Red::Mean, Red::Max, Red::Min, Red::Prod})
    for (int mask = 0; mask < (1 << rank); ++mask)
      for (bool keepdims : {false, true}) {
        std::vector<int64_t> axes;
        std::vector<bool> reduced(rank);
        for (int d = 0; d < rank; ++d)
          if (mask & (1 << d)) {
            reduced[d] = true;
            // Alternate negative and positive spellings of the same axis.
            axes.push_back(d % 2 ? d - rank : d);
          }
        SCOPED_TRACE(::testing::Message() << "op " << static_cast<int>(op) << " mask " << mask << " keepdims "
                                          << keepdims);
        Dims out_shape;
        const auto expected = ref_reduce(x, shape, reduced, op, out_shape, keepdims);
        const ag::Tensor r = apply(op, t, ag::Axes(axes), keepdims);
        EXPECT_EQ(agtest::dims(r), out_shape);
        agtest::expect_values(r, expected, rel, rel);
        if (mask == (1 << rank) - 1) {  // all axes, by default
          const ag::Tensor all = apply(op, t, ag::Axes{}, keepdims);
          EXPECT_EQ(agtest::dims(all), out_shape);
          agtest::expect_values(all, expected, rel, rel);
        }
      }
}

TYPED_TEST(Reduce, EveryAxisSubsetOfRank4) {
  using T = TypeParam;
  // Small values keep products within range (and exact for integers).
  std::vector<T> x = agtest::sample<T>(2 * 3 * 4 * 5, 51, true, 2);
  const double rel = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  check_all_axis_subsets<T>({2, 3, 4, 5}, x, rel);
}

// Rows of 1 to 4 elements reduce in their own loop (reduce.cpp, reduce_short_rows); 5 do not.
TYPED_TEST(Reduce, ShortLastAxisRows) {
  using T = TypeParam;
  const double rel = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (int64_t n = 1; n <= 5; ++n) {
    SCOPED_TRACE(::testing::Message() << "rows of " << n);
    check_all_axis_subsets<T>({7, n}, agtest::sample<T>(7 * n, 52 + static_cast<uint32_t>(n), true, 2), rel);
    check_all_axis_subsets<T>({3, 2, n}, agtest::sample<T>(6 * n, 60 + static_cast<uint32_t>(n), true, 2), rel);
  }
}

TEST(Reduce, ShortRowsKeepSignedZerosAndNaN) {
  const ag::Tensor z = agtest::make<float>({-0.f, 0.f, 0.f, -0.f, NAN, 1.f}, {3, 2});
  const auto mx = ag::reduce_max(z, 1).to_vector<float>(), mn = ag::reduce_min(z, 1).to_vector<float>();
  EXPECT_FALSE(std::signbit(mx[0]));
  EXPECT_FALSE(std::signbit(mx[1]));
  EXPECT_TRUE(std::signbit(mn[0]));
  EXPECT_TRUE(std::signbit(mn[1]));
  EXPECT_TRUE(std::isnan(mx[2]) && std::isnan(mn[2]));
}

TYPED_TEST(Reduce, SizeOneAndZeroDims) {
  using T = TypeParam;
  const double rel = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  check_all_axis_subsets<T>({3, 1, 4}, agtest::sample<T>(12, 52, true, 3), rel);
  check_all_axis_subsets<T>({1, 5, 1}, agtest::sample<T>(5, 53, true, 3), rel);
  check_all_axis_subsets<T>({2, 0, 3}, {}, rel);
  check_all_axis_subsets<T>({0}, {}, rel);
}

TYPED_TEST(Reduce, ScalarInput) {
  using T = TypeParam;
  const ag::Tensor s(T(7));
  for (Red op : {Red::Sum, Red::Mean, Red::Max, Red::Min, Red::Prod}) {
    const ag::Tensor r = apply(op, s, ag::Axes{}, false);
    EXPECT_EQ(r.rank(), 0);
    EXPECT_EQ(r.template item<T>(), T(7));
  }
}

TYPED_TEST(Reduce, EmptyAxisListIsTheIdentity) {
  using T = TypeParam;
  const auto x = agtest::sample<T>(6, 54);
  const ag::Tensor r = ag::reduce_sum(make(x, {2, 3}), std::vector<int64_t>{});
  EXPECT_EQ(agtest::dims(r), (Dims{2, 3}));
  agtest::expect_values(r, x);
}

TEST(Reduce, EmptyReductionsGiveTheIdentityElement) {
  const ag::Tensor e = ag::zeros({0, 2});
  EXPECT_EQ(ag::reduce_sum(e, 0).to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(ag::reduce_prod(e, 0).to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(ag::reduce_max(e, 0).to_vector<float>(), (std::vector<float>{-INFINITY, -INFINITY}));
  EXPECT_EQ(ag::reduce_min(e).item<float>(), INFINITY);
  EXPECT_TRUE(std::isnan(ag::reduce_mean(e).item<float>()));
  EXPECT_EQ(ag::reduce_max(ag::zeros({0}, ag::int32)).item<int32_t>(), INT32_MIN);
  EXPECT_EQ(ag::reduce_min(ag::zeros({0}, ag::int64)).item<int64_t>(), INT64_MAX);
  EXPECT_EQ(ag::reduce_any(ag::zeros({0}, ag::bool_)).item<bool>(), false);
  EXPECT_EQ(ag::reduce_all(ag::zeros({0}, ag::bool_)).item<bool>(), true);
  EXPECT_EQ(agtest::dims(ag::reduce_sum(e, 1)), (Dims{0}));
}

TEST(Reduce, NaNPropagatesThroughMaxAndMin) {
  // NaN first, middle, last; in a contiguous row and across a strided axis.
  const ag::Tensor x = agtest::make<float>({NAN, 1, 2, 3, NAN, 5, 6, 7, NAN, 1, 2, 3}, {4, 3});
  EXPECT_TRUE(std::isnan(ag::reduce_max(x).item<float>()));
  EXPECT_TRUE(std::isnan(ag::reduce_min(x).item<float>()));
  const auto rows = ag::reduce_max(x, 1).to_vector<float>();
  EXPECT_TRUE(std::isnan(rows[0]) && std::isnan(rows[1]) && std::isnan(rows[2]));
  EXPECT_EQ(rows[3], 3.f);
  const auto cols = ag::reduce_min(x, 0).to_vector<float>();
  EXPECT_TRUE(std::isnan(cols[0]) && std::isnan(cols[1]) && std::isnan(cols[2]));
  const auto big = ag::reduce_max(ag::concat({ag::ones({1000}), ag::constant({NAN}), ag::ones({37})}, 0));
  EXPECT_TRUE(std::isnan(big.item<float>()));
  EXPECT_TRUE(std::isnan(ag::reduce_sum(x).item<float>()));
}

TEST(Reduce, AnyAndAll) {
  const ag::Tensor b = agtest::make<bool>({true, false, false, false, true, true}, {2, 3});
  EXPECT_EQ(ag::reduce_any(b).item<bool>(), true);
  EXPECT_EQ(ag::reduce_all(b).item<bool>(), false);
  EXPECT_EQ(ag::reduce_any(b, 1).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(ag::reduce_all(b, 1).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(ag::reduce_any(b, 0).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(ag::reduce_all(b, 0).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(ag::reduce_all(b, -1, true).shape(), (ag::Shape{2, 1}));
  const ag::Tensor c = agtest::make<bool>({true, true, false, true, true, true, true, true}, {2, 2, 2});
  // Only c[0,1,0] is false: the j = 1 slice is not all true.
  EXPECT_EQ(ag::reduce_all(c, {0, 2}).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(ag::reduce_any(~c, {0, 2}).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(ag::reduce_all(c, {1, 2}).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(Reduce, Errors) {
  const ag::Tensor x = ag::zeros({2, 3});
  AG_EXPECT_ERROR(ag::ValueError, ag::reduce_sum(x, 2), "ag::reduce_sum", "axis 2", "rank 2");
  AG_EXPECT_ERROR(ag::ValueError, ag::reduce_max(x, -3), "ag::reduce_max", "axis -3");
  AG_EXPECT_ERROR(ag::ValueError, ag::reduce_mean(x, {0, -2}), "ag::reduce_mean", "twice");
  AG_EXPECT_ERROR(ag::TypeError, ag::reduce_any(x), "ag::reduce_any", "bool", "float32");
  AG_EXPECT_ERROR(ag::TypeError, ag::reduce_sum(ag::zeros({2}, ag::bool_)), "ag::reduce_sum", "bool");
  AG_EXPECT_ERROR(ag::ValueError, ag::reduce_sum(ag::Tensor(1.f), 0), "ag::reduce_sum", "axis 0", "rank 0");
}

TEST(Reduce, IntegerSumWrapsAndMeanTruncates) {
  EXPECT_EQ(ag::reduce_sum(ag::constant({INT32_MAX, 1})).item<int32_t>(), INT32_MIN);
  EXPECT_EQ(ag::reduce_mean(ag::constant({1, 2})).item<int32_t>(), 1);
  EXPECT_EQ(ag::reduce_mean(ag::constant({-1, -2})).item<int32_t>(), -1);
}

// ---- argmax / argmin ----

template <class T>
class ArgReduce : public ::testing::Test {};
TYPED_TEST_SUITE(ArgReduce, agtest::NumericTypes);

TYPED_TEST(ArgReduce, EveryAxisMatchesTheReference) {
  using T = TypeParam;
  const Dims shape = {3, 4, 5};
  const auto x = agtest::sample<T>(60, 61, false, 3);  // many ties
  const ag::Tensor t = make(x, shape);
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    Dims out_shape;
    for (int64_t d = 0; d < 3; ++d)
      if (d != a) out_shape.push_back(shape[d]);
    std::vector<int64_t> emax, emin;
    const auto st = agtest::row_major_strides(shape);
    agtest::for_each_index(out_shape, [&](const Dims& o) {
      Dims idx;
      for (int64_t d = 0, k = 0; d < 3; ++d) idx.push_back(d == a ? 0 : o[k++]);
      int64_t best_max = 0, best_min = 0;
      T vmax = 0, vmin = 0;
      for (int64_t r = 0; r < shape[a]; ++r) {
        idx[a] = r;
        int64_t off = 0;
        for (int d = 0; d < 3; ++d) off += idx[d] * st[d];
        if (r == 0 || x[off] > vmax) vmax = x[off], best_max = r;  // first index wins ties
        if (r == 0 || x[off] < vmin) vmin = x[off], best_min = r;
      }
      emax.push_back(best_max);
      emin.push_back(best_min);
    });
    SCOPED_TRACE(axis);
    const ag::Tensor am = ag::argmax(t, axis), an = ag::argmin(t, axis);
    EXPECT_EQ(am.dtype(), ag::int64);
    EXPECT_EQ(agtest::dims(am), out_shape);
    EXPECT_EQ(am.to_vector<int64_t>(), emax);
    EXPECT_EQ(an.to_vector<int64_t>(), emin);
  }
}

TEST(ArgReduce, TiesGiveTheFirstIndex) {
  EXPECT_EQ(ag::argmax(ag::constant({1, 3, 3, 2, 3})).item<int64_t>(), 1);
  EXPECT_EQ(ag::argmin(ag::constant({2.f, 0.f, 5.f, 0.f})).item<int64_t>(), 1);
  EXPECT_EQ(ag::argmax(ag::constant({7, 7, 7})).item<int64_t>(), 0);
  EXPECT_EQ(ag::argmax(ag::constant({{1, 1}, {1, 1}}), 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
}

TEST(ArgReduce, ANanFirstStaysAndALaterOneNeverWins) {
  // Only a strictly better element replaces the best: every comparison with NaN is false.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ag::Tensor x = agtest::make<float>({nan, 5.f, -1.f, 2.f, 3.f, nan, -4.f, 9.f, 1.f, 0.f, nan, 0.f}, {3, 4});
  EXPECT_EQ(ag::argmax(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 0}));
  EXPECT_EQ(ag::argmin(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1}));
  // Rows of 8 over many outputs (the k-means argmin), against the reference loop's answer.
  std::vector<float> v(8 * 1000);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((k * 2654435761u) % 1000) - 500.0f;
  const ag::Tensor rows = agtest::make<float>(v, {1000, 8});
  const std::vector<int64_t> got = ag::argmin(rows, 1).to_vector<int64_t>();
  for (size_t r = 0; r < 1000; ++r)
    EXPECT_EQ(got[r], std::min_element(v.begin() + static_cast<long>(8 * r), v.begin() + static_cast<long>(8 * r + 8)) -
                          (v.begin() + static_cast<long>(8 * r)))
        << r;
}

TEST(ArgReduce, Errors) {
  AG_EXPECT_ERROR(ag::ValueError, ag::argmax(ag::Tensor(1.f)), "ag::argmax", "scalar");
  AG_EXPECT_ERROR(ag::ValueError, ag::argmin(ag::zeros({2, 3}), 2), "ag::argmin", "axis 2");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::argmax(ag::zeros({3, 0}), 1), "ag::argmax", "empty", "[3,0]");
  AG_EXPECT_ERROR(ag::TypeError, ag::argmax(ag::zeros({3}, ag::bool_)), "ag::argmax", "bool");
  // An empty result is fine when the reduced axis is not the empty one.
  EXPECT_EQ(agtest::dims(ag::argmax(ag::zeros({0, 3}), 1)), (Dims{0}));
}

}  // namespace
