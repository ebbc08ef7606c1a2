// Row reductions over short rows (a row a few vectors long, its outputs contiguous: a softmax's
// max and denominators over 16 classes, a logistic regression's logits written as
// reduce_sum(x * w, 1)) fold each group of rows in vector registers into one vector of results
// (Emitter::row_vectors; a max or min on ordered integer keys). Three-way for sums, means,
// products, maxima and minima of both float dtypes, every row count around a group's
// (the rows after the last whole group are reduced one by one), unknown row counts, special
// values, the pool's split, under a tape; the vector form checked in the IR. Rows that end in a
// partial vector (12 or 20 floats on AVX-512) read it under a mask. Long rows (at least 3
// vectors) of any reduction accumulate each row in a register (lower_reduce.cpp, the row form):
// a variance or a log-sum-exp written as one expression, whose fused operand reads a row's mean
// or max repeated along the row; integer sums and any/all alike.
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using agtest::sample;
using agtest::Values;

const agtest::Tol kTol{.rtol = 1e-5, .atol = 1e-5};

// The IR has the vector form: the tree's shuffles (rows.kept, rows.moved) or, for the rows after
// the last whole group, the halving of one row's vector (rows.low, rows.high).
bool has_row_vectors_in(const std::string& ir) {
  return ir.find("%rows.kept") != std::string::npos || ir.find("%rows.low") != std::string::npos;
}
bool has_row_vectors(auto& f, const auto&... args) { return has_row_vectors_in(f.get_concrete_function(args...).llvm_ir(false)); }

// Whether rows of `bytes` take the vector form here, on the x86-64 level the tests run at: at
// most two vectors (Emitter::kMaxRowVectors), whole, or ending in a partial one read under a
// mask (Emitter::row_tail_fits: over half a vector on AVX-512, over one on AVX2, and at least
// 2^15 `elements` in all when their number is known).
bool row_form_fits(int64_t bytes, int64_t elements = -1) {
  const int64_t vector = agtest::jit_vector_bytes();
  if (bytes > 2 * vector) return false;
  if (bytes % vector == 0) return true;
  if (elements >= 0 && elements < (1 << 15)) return false;
  return vector == 64 ? bytes > vector / 2 : vector == 32 && bytes > vector;
}

// The IR reads a row's last, partial vector under a mask.
bool reads_a_partial_row_vector_in(const std::string& ir) {
  return ir.find("%rows.tail") != std::string::npos && ir.find("@llvm.masked.load") != std::string::npos;
}
bool reads_a_partial_row_vector(auto& f, const auto&... args) {
  return reads_a_partial_row_vector_in(f.get_concrete_function(args...).llvm_ir(false));
}

// A softmax's squared error and its gradient, eager == interpreter == JIT with the tape inside
// the trace, eager == compiled with the tape outside (the Function's own gradient). Returns the
// IR of the Function with the tape inside.
std::string expect_softmax_gradient_both_ways(const Tensor& logits, const Tensor& target, const std::string& tag) {
  auto loss = [](Tensor z, Tensor y) {
    Tensor e = ag::exp(z - ag::reduce_max(z, {1}, true));
    return ag::reduce_sum(ag::square(e / ag::reduce_sum(e, {1}, true) - y));
  };
  auto inside = [&](Tensor z, Tensor y) {
    ag::GradientTape tape;
    tape.watch(z);
    return tape.gradient(loss(z, y), z);
  };
  agtest::expect_three_way(tag + " gradient, tape inside", inside, kTol, logits, target);
  auto staged = ag::function(loss);
  ag::GradientTape eager_tape, staged_tape;
  eager_tape.watch(logits);
  staged_tape.watch(logits);
  const Tensor eager = eager_tape.gradient(loss(logits, target), logits);
  const Tensor compiled = staged_tape.gradient(staged(logits, target), logits);
  agtest::expect_same(eager, compiled, kTol, tag + " gradient, tape outside");
  auto jit = ag::function(inside);
  return jit.get_concrete_function(logits, target).llvm_ir(false);
}

TEST(JitRowReductions, SumsMeansProductsAndExtremesOfEveryRowCount) {
  for (ag::DType d : {ag::float32, ag::float64})
    for (int64_t width : {16, 32, 64})
      for (int64_t rows : {1, 7, 16, 17, 40, 301}) {
        const Tensor x = ag::cast(sample(ag::float32, {rows, width}, 1, Values::Moderate), d);
        const Tensor p = ag::cast(sample(ag::float32, {1, width}, 2, Values::Moderate), d);
        const std::string tag = std::string(ag::dtype_name(d)) + " " + std::to_string(rows) + " x " + std::to_string(width);
        auto reductions = [](Tensor v, Tensor q) {
          return std::make_tuple(ag::reduce_sum(v * q, {1}), ag::reduce_mean(v, {1}, true), ag::reduce_prod(v * 0.01 + 1.0, {1}),
                                 ag::reduce_max(v - q, {1}), ag::reduce_min(v, {1}, true));
        };
        // A row's terms summed in a tree's order here, in another eagerly: up to 64 products of
        // magnitude up to 100 may cancel to a small sum that differs by a few ulps of the terms.
        agtest::expect_three_way("row reductions, " + tag, reductions, {.rtol = 1e-5, .atol = 1e-4}, x, p);
        auto sum_only = [](Tensor v, Tensor q) { return ag::reduce_sum(v * q, {1}); };
        auto f = ag::function(sum_only);
        // One row is a 1-D walk, a full reduction.
        if (rows > 1) EXPECT_EQ(has_row_vectors(f, x, p), row_form_fits(width * static_cast<int64_t>(ag::dtype_size(d)))) << tag;
      }
}

TEST(JitRowReductions, TrailingDimsCollapseIntoOneRow) {
  // [B, T, 4, 4] reduced over its last two dims: rows of 16 elements, B * T of them.
  const Tensor x = sample(ag::float32, {3, 21, 4, 4}, 3, Values::Moderate);
  auto f = [](Tensor t) { return ag::reduce_sum(ag::square(t) * 0.5f + t, {2, 3}); };
  agtest::expect_three_way("[3,21,4,4] over {2,3}", f, kTol, x);
  auto jit = ag::function(f);
  EXPECT_EQ(has_row_vectors(jit, x), row_form_fits(16 * 4));
}

TEST(JitRowReductions, UnknownRowCounts) {
  auto f = [](Tensor t) { return ag::reduce_sum(t * t, {1}); };
  const ag::FunctionOptions options{.input_signature = {ag::TensorSpec({-1, 16}, ag::float32, "t")}};
  auto jit = ag::function(f, options);
  for (int64_t rows : {0, 5, 32, 33, 1000}) {
    const Tensor x = sample(ag::float32, {rows, 16}, 4, Values::Moderate);
    agtest::expect_three_way_with("unknown rows, " + std::to_string(rows), f, options, kTol, x);
    agtest::expect_same(f(x), jit(x), kTol, "one trace, " + std::to_string(rows) + " rows");
  }
  EXPECT_EQ(jit.stats().traces, 1);
  EXPECT_EQ(has_row_vectors(jit, sample(ag::float32, {9, 16}, 4, Values::Moderate)), row_form_fits(16 * 4));
}

TEST(JitRowReductions, NanInfAndSignedZerosStayInTheirRows) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> v(40 * 16, 1.0f);
  v[5 * 16 + 3] = nan;  // row 5: NaN
  v[7 * 16 + 4] = inf;  // row 7: Inf
  v[8 * 16 + 0] = inf;  // row 8: Inf - Inf = NaN
  v[8 * 16 + 9] = -inf;
  for (int j = 0; j < 16; ++j) v[static_cast<size_t>(20 * 16 + j)] = -0.0f;  // row 20: a sum of -0s
  for (int j = 0; j < 16; ++j) v[static_cast<size_t>(39 * 16 + j)] = -0.0f;  // row 39: in the rows after the groups
  const Tensor x = ag::constant(v, {40, 16});
  auto f = [](Tensor t) {
    return std::make_tuple(ag::reduce_sum(t, {1}), ag::reduce_prod(t, {1}), ag::reduce_max(t, {1}), ag::reduce_min(t, {1}));
  };
  agtest::expect_three_way("special values", f, {}, x);
  auto jit = ag::function(f);
  const auto [sum_t, prod_t, max_t, min_t] = jit(x);
  const std::vector<float> sums = sum_t.to_vector<float>(), maxima = max_t.to_vector<float>(), minima = min_t.to_vector<float>();
  // NaN wins a max and a min; -0 is below +0; a row of only -0 keeps its sign.
  EXPECT_TRUE(std::isnan(maxima[5]) && std::isnan(minima[5]));
  EXPECT_EQ(maxima[7], inf);
  EXPECT_EQ(minima[8], -inf);
  EXPECT_TRUE(maxima[20] == 0.0f && std::signbit(maxima[20]));
  EXPECT_TRUE(minima[39] == 0.0f && std::signbit(minima[39]));
  EXPECT_EQ(has_row_vectors(jit, x), row_form_fits(16 * 4));
  EXPECT_TRUE(std::isnan(sums[5]) && std::isinf(sums[7]) && std::isnan(sums[8]));
  EXPECT_EQ(sums[4], 16.0f);
  EXPECT_EQ(sums[6], 16.0f);
  // A sum starts from +0, as the scalar walk's does: -0 + -0 ... + 0 is +0.
  EXPECT_FALSE(std::signbit(sums[20]));
  EXPECT_FALSE(std::signbit(sums[39]));
}

TEST(JitRowReductions, LargeOperandsSplitByGroupsOfRowsOnTwoThreads) {
  const Tensor x = sample(ag::float32, {20000, 32}, 5, Values::Moderate);
  auto f = [](Tensor t) { return ag::reduce_mean(ag::square(t), {1}); };
  for (int threads : {1, 2}) {
    const ag::detail::ScopedNumThreads scoped(threads);
    agtest::expect_three_way("large, " + std::to_string(threads) + " threads", f, kTol, x);
  }
  auto jit = ag::function(f);
  EXPECT_EQ(has_row_vectors(jit, x), row_form_fits(32 * 4));
  EXPECT_TRUE(agtest::ir_calls(jit.get_concrete_function(x).llvm_ir(true), "agc_rt_parallel_for"));
}

TEST(JitRowReductions, ASoftmaxAndItsGradientUnderATapeInsideTheTraceAndOutside) {
  const Tensor logits = sample(ag::float32, {50, 16}, 6, Values::Moderate);
  const Tensor target = sample(ag::float32, {50, 16}, 7, Values::Moderate);
  EXPECT_EQ(has_row_vectors_in(expect_softmax_gradient_both_ways(logits, target, "softmax")), row_form_fits(16 * 4));
}

// A row-normalizing Function called from another one's staged loop (inlined into its trace),
// eager == interpreter == JIT; returns the outer Function's IR.
std::string expect_normalizing_in_a_staged_loop(const Tensor& x, const std::string& tag) {
  auto normalize = ag::function([](Tensor t) { return t / ag::reduce_sum(ag::abs(t), {1}, true); });
  auto outer = [&](Tensor t, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     t = normalize(t * 1.5f + 0.25f) - ag::reduce_max(t, {1}, true) * 0.125f;
                     i += 1;
                   },
                   ag::state(t, i), {"t", "i"}, AG_SOURCE_LOC("row_reductions_test.cpp", 150));
    return t;
  };
  agtest::expect_three_way(tag, outer, kTol, x, ag::constant(int32_t{4}));
  auto jit = ag::function(outer);
  return jit.get_concrete_function(x, ag::constant(int32_t{4})).llvm_ir(false);
}

TEST(JitRowReductions, InsideANestedFunctionInAStagedLoop) {
  const Tensor x = sample(ag::float32, {67, 16}, 9, Values::Moderate);
  EXPECT_EQ(has_row_vectors_in(expect_normalizing_in_a_staged_loop(x, "nested, staged")), row_form_fits(16 * 4));
}

// Rows that are not whole vectors: their last vector read under a mask (its other lanes the
// reduction's initial value) where masked loads are cheap, the row long enough and the operand
// large enough; shorter rows, small operands (17 rows) and rows of three vectors or more keep
// the memory form. Widths are in vectors of this machine's JIT; rows of 9 to 15 floats in
// memory were 1.2-1.9x slower than a plain loop.
TEST(JitRowReductions, RowsEndingInAPartialVectorReadItUnderAMask) {
  const int64_t float_lanes = agtest::jit_vector_bytes() / 4;
  for (ag::DType d : {ag::float32, ag::float64}) {
    const int64_t lanes = float_lanes / (d == ag::float64 ? 2 : 1);
    for (int64_t width : {lanes / 2 + 1, 3 * lanes / 4, lanes - 1, lanes + 1, 3 * lanes / 2, 2 * lanes - 1, lanes / 2, 2 * lanes + 1}) {
      if (width < 2 || width % lanes == 0) continue;
      for (int64_t rows : {1, 17, 7001}) {
        const Tensor x = ag::cast(sample(ag::float32, {rows, width}, 21, Values::Moderate), d);
        const Tensor p = ag::cast(sample(ag::float32, {1, width}, 22, Values::Moderate), d);
        const std::string tag = std::string(ag::dtype_name(d)) + " " + std::to_string(rows) + " x " + std::to_string(width);
        auto reductions = [](Tensor v, Tensor q) {
          return std::make_tuple(ag::reduce_sum(v * q, {1}), ag::reduce_mean(ag::exp(v * 0.1), {1}, true),
                                 ag::reduce_prod(v * 0.01 + 1.0, {1}), ag::reduce_max(v - q, {1}), ag::reduce_min(v, {1}, true));
        };
        agtest::expect_three_way("partial row vectors, " + tag, reductions, {.rtol = 1e-5, .atol = 1e-4}, x, p);
        if (rows == 1) continue;  // one row is a 1-D walk, a full reduction
        auto sum_only = ag::function([](Tensor v, Tensor q) { return ag::reduce_sum(v * q, {1}); });
        auto max_only = ag::function([](Tensor v, Tensor q) { return ag::reduce_max(v - q, {1}); });
        const bool fits = row_form_fits(width * static_cast<int64_t>(ag::dtype_size(d)), rows * width);
        EXPECT_EQ(has_row_vectors(sum_only, x, p), fits) << tag;
        EXPECT_EQ(reads_a_partial_row_vector(sum_only, x, p), fits) << tag;
        EXPECT_EQ(reads_a_partial_row_vector(max_only, x, p), fits) << tag;
      }
    }
  }
}

// An unknown row count takes the partial vectors whatever it turns out to be (no size to weigh):
// no rows, fewer than a group, groups and the rows after them, one trace; and a Hessian-vector
// product through a softmax over such rows (grad of grad).
TEST(JitRowReductions, PartialRowVectorsWithUnknownRowCountsAndSecondOrder) {
  const int64_t width = 14;  // floats: partial on AVX-512 (0.875 of a vector) and AVX2 (1.75)
  auto f = [](Tensor t) { return std::make_tuple(ag::reduce_sum(ag::square(t), {1}), ag::reduce_max(t, {1}, true)); };
  const ag::FunctionOptions options{.input_signature = {ag::TensorSpec({-1, width}, ag::float32, "t")}};
  auto jit = ag::function(f, options);
  for (int64_t rows : {0, 5, 16, 33, 1000}) {
    const Tensor x = sample(ag::float32, {rows, width}, 28, Values::Moderate);
    agtest::expect_three_way_with("unknown rows, " + std::to_string(rows), f, options, kTol, x);
    const auto [sums, maxima] = jit(x);
    const auto [eager_sums, eager_maxima] = f(x);
    agtest::expect_same(eager_sums, sums, kTol, "one trace, sums, " + std::to_string(rows) + " rows");
    agtest::expect_same(eager_maxima, maxima, {.rtol = 0, .atol = 0}, "one trace, maxima, " + std::to_string(rows) + " rows");
  }
  EXPECT_EQ(jit.stats().traces, 1);
  EXPECT_EQ(reads_a_partial_row_vector(jit, sample(ag::float32, {9, width}, 28, Values::Moderate)), row_form_fits(width * 4));

  // d/dz <grad softmax loss, v>: the softmax's row reductions in the forward pass, its gradient's
  // and their own gradients, over a batch large enough for the partial vectors.
  const Tensor z = sample(ag::float32, {4000, 10}, 29, Values::Moderate);
  const Tensor v = sample(ag::float32, {4000, 10}, 30, Values::Moderate);
  auto hvp = [](Tensor logits, Tensor dir) {
    auto loss = [](Tensor a) {
      Tensor e = ag::exp(a - ag::reduce_max(a, {1}, true));
      return ag::reduce_sum(ag::log(ag::reduce_sum(e, {1})) * 0.5f);
    };
    ag::GradientTape outer;
    outer.watch(logits);
    Tensor g;
    {
      ag::GradientTape inner;
      inner.watch(logits);
      g = inner.gradient(loss(logits), logits);
    }
    return outer.gradient(ag::reduce_sum(g * dir), logits);
  };
  agtest::expect_three_way("Hessian-vector product over ten classes", hvp, {.rtol = 1e-4, .atol = 1e-5}, z, v);
  auto hvp_jit = ag::function(hvp);
  EXPECT_EQ(reads_a_partial_row_vector(hvp_jit, z, v), row_form_fits(10 * 4, 4000 * 10));
}

// The lanes past a row's end are masked off: the next row's first element (huge) never reaches
// a row's sum, maximum or product; NaN, infinities and -0 in a row's last element stay there.
TEST(JitRowReductions, APartialVectorsMaskedLanesTakeNothingFromTheNextRow) {
  const int64_t width = 3 * agtest::jit_vector_bytes() / 4 / 4 + 1;  // floats: 13 on AVX-512
  const int64_t rows = 3001;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> v(static_cast<size_t>(rows * width), 0.5f);
  for (int64_t r = 0; r < rows; ++r) v[static_cast<size_t>(r * width)] = 1e30f;  // each row's first element
  v[static_cast<size_t>(6 * width - 1)] = nan;   // row 5's last
  v[static_cast<size_t>(8 * width - 1)] = inf;   // row 7's last
  v[static_cast<size_t>(9 * width - 1)] = -inf;  // row 8's last
  for (int64_t j = 0; j < width; ++j) v[static_cast<size_t>(20 * width + j)] = -0.0f;  // row 20: only -0
  const Tensor x = ag::constant(v, {rows, width});
  auto f = [](Tensor t) {
    Tensor tail = ag::slice(t, {0, 1}, {-1, -1});  // without the huge first element
    return std::make_tuple(ag::reduce_sum(tail, {1}), ag::reduce_max(tail, {1}), ag::reduce_min(tail, {1}), ag::reduce_prod(tail, {1}));
  };
  agtest::expect_three_way("masked lanes", f, {}, x);
  auto jit = ag::function(f);
  const auto [sum_t, max_t, min_t, prod_t] = jit(x);
  const std::vector<float> sums = sum_t.to_vector<float>(), maxima = max_t.to_vector<float>(), minima = min_t.to_vector<float>();
  EXPECT_FLOAT_EQ(sums[0], 0.5f * static_cast<float>(width - 1));
  EXPECT_EQ(maxima[0], 0.5f);
  EXPECT_TRUE(std::isnan(sums[5]) && std::isnan(maxima[5]) && std::isnan(minima[5]));
  EXPECT_EQ(maxima[7], inf);
  EXPECT_EQ(minima[8], -inf);
  EXPECT_TRUE(maxima[20] == 0.0f && std::signbit(maxima[20]));
  EXPECT_EQ(maxima[rows - 1], 0.5f);
  auto sum_jit = ag::function([](Tensor t) { return ag::reduce_sum(ag::slice(t, {0, 1}, {-1, -1}), {1}); });
  EXPECT_EQ(reads_a_partial_row_vector(sum_jit, x), row_form_fits((width - 1) * 4, rows * (width - 1)));
}

// The row form: each row's sum in a register (a phi named acc in the IR before optimization),
// where the memory form loaded and stored the output per element.
bool accumulates_rows_in_registers(auto& f, const auto&... args) {
  const std::string ir = f.get_concrete_function(args...).llvm_ir(false);
  return ir.find("%acc = phi float") != std::string::npos || ir.find("%acc = phi double") != std::string::npos;
}

TEST(JitRowReductions, LongRowsOfAFusedOperandAccumulateInRegisters) {
  auto variance = [](Tensor t) { return ag::reduce_mean(ag::square(t - ag::reduce_mean(t, {1}, true)), {1}); };
  auto log_sum_exp = [](Tensor t) {
    const Tensor m = ag::reduce_max(t, {1}, true);
    return ag::log(ag::reduce_sum(ag::exp(t - m), {1})) + ag::squeeze(m, {1});
  };
  for (ag::DType d : {ag::float32, ag::float64})
    for (const ag::Shape& shape : {ag::Shape{301, 256}, ag::Shape{7, 1000}, ag::Shape{40, 72}}) {
      const Tensor x = ag::cast(sample(ag::float32, shape, 10, Values::Moderate), d);
      const std::string tag = std::string(ag::dtype_name(d)) + " " + shape.str();
      agtest::expect_three_way("variance " + tag, variance, kTol, x);
      agtest::expect_three_way("log-sum-exp " + tag, log_sum_exp, kTol, x);
      auto jit = ag::function(variance);
      EXPECT_TRUE(accumulates_rows_in_registers(jit, x)) << tag;
    }
  // Integers and booleans too: an int32 sum of squares about the row's minimum, a row's any.
  const Tensor ints = ag::cast(sample(ag::float32, {97, 300}, 15, Values::Moderate) * 50.f, ag::int32);
  auto int_sum = [](Tensor t) { return ag::reduce_sum(ag::square(t - ag::reduce_min(t, {1}, true)), {1}); };
  auto near_max = [](Tensor t) { return ag::reduce_any(t > ag::reduce_max(t, {1}, true) - 2, {1}); };
  agtest::expect_three_way("int32 sum of squares", int_sum, {.rtol = 0, .atol = 0}, ints);
  agtest::expect_three_way("any near the row's max", near_max, {.rtol = 0, .atol = 0}, ints);
  auto int_jit = ag::function(int_sum);
  EXPECT_NE(int_jit.get_concrete_function(ints).llvm_ir(false).find("%acc = phi i32"), std::string::npos);
  // Unknown row counts and lengths.
  const ag::FunctionOptions unknown{.input_signature = {ag::TensorSpec({-1, -1}, ag::float32)}};
  const Tensor x = sample(ag::float32, {33, 130}, 11, Values::Moderate);
  agtest::expect_three_way_with("variance, unknown dims", variance, unknown, kTol, x);
  auto any = ag::function(variance, unknown);
  EXPECT_TRUE(accumulates_rows_in_registers(any, x));
}

// A row statistic in compositions, eager == interpreter == JIT: the gradient of a loss weighted
// by it under a tape inside the trace, and the statistic in a staged loop that rescales the rows.
// `statistic` may be a Function (then nested in both).
template <class Statistic>
void expect_row_statistic_in_compositions(Statistic statistic, const Tensor& x, const std::string& tag) {
  auto gradient = [&](Tensor t) {
    ag::GradientTape tape;
    tape.watch(t);
    return tape.gradient(ag::reduce_sum(statistic(t) * ag::reduce_sum(t, {1})), t);
  };
  agtest::expect_three_way("gradient, tape inside, " + tag, gradient, {.rtol = 1e-4, .atol = 1e-4}, x);
  auto staged = [&](Tensor t, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     t = t * ag::rsqrt(ag::expand_dims(statistic(t), 1) + 1e-3f) + 0.5f;
                     i += 1;
                   },
                   ag::state(t, i), {"t", "i"}, AG_SOURCE_LOC("row_reductions_test.cpp", 226));
    return t;
  };
  agtest::expect_three_way("in a staged loop, " + tag, staged, {.rtol = 1e-4, .atol = 1e-4}, x, ag::constant(int32_t{3}));
}

// Short rows with a row constant inside the reduction (the row's mean subtracted in its sum, a
// log-sum-exp's max) take the row form too: in memory they were 5-7x slower for rows of 12 to
// 56 floats on AVX-512 (3 vectors, 1.25, 1.5, 0.75 of one); those of at most two vectors take
// the row vectors where they fit (a partial one under a mask), faster still. A plain reduction
// over such rows never takes the row form. Widths are in vectors of this machine's JIT
// (x86-64-v2, v3 or v4).
TEST(JitRowReductions, ShortRowsWithARowConstantAccumulateInRegisters) {
  auto variance = [](Tensor t) { return ag::reduce_mean(ag::square(t - ag::reduce_mean(t, {1}, true)), {1}); };
  auto log_sum_exp = [](Tensor t) {
    const Tensor m = ag::reduce_max(t, {1}, true);
    return ag::log(ag::reduce_sum(ag::exp(t - m), {1})) + ag::squeeze(m, {1});
  };
  auto sum_of_squares = [](Tensor t) { return ag::reduce_sum(ag::square(t), {1}); };
  const int64_t float_lanes = agtest::jit_vector_bytes() / 4;
  for (ag::DType d : {ag::float32, ag::float64}) {
    const int64_t lanes = float_lanes / (d == ag::float64 ? 2 : 1);
    for (int64_t width : {3 * lanes, 5 * lanes / 4, 3 * lanes / 2, 3 * lanes / 4}) {
      if (width <= 2 || (width % lanes == 0 && width / lanes <= 2)) continue;  // too short; whole row vectors
      const Tensor x = ag::cast(sample(ag::float32, {173, width}, 16, Values::Moderate), d);
      const std::string tag = std::string(ag::dtype_name(d)) + " rows of " + std::to_string(width);
      agtest::expect_three_way("variance " + tag, variance, kTol, x);
      agtest::expect_three_way("log-sum-exp " + tag, log_sum_exp, kTol, x);
      auto jit = ag::function(variance);
      const bool row_vectors = row_form_fits(width * static_cast<int64_t>(ag::dtype_size(d)), 173 * width);
      EXPECT_TRUE(row_vectors ? has_row_vectors(jit, x) : accumulates_rows_in_registers(jit, x)) << tag;
      if (width < 4 * lanes) {
        agtest::expect_three_way("sum of squares " + tag, sum_of_squares, kTol, x);
        auto plain = ag::function(sum_of_squares);
        EXPECT_FALSE(accumulates_rows_in_registers(plain, x)) << tag;
        EXPECT_EQ(has_row_vectors(plain, x), row_vectors) << tag;
      }
    }
  }
  // An int32 row constant (the row's minimum), and inside a Function under a tape outside it
  // and in a staged loop.
  const Tensor ints = ag::cast(sample(ag::float32, {97, 3 * float_lanes / 2}, 17, Values::Moderate) * 50.f, ag::int32);
  auto int_sum = [](Tensor t) { return ag::reduce_sum(ag::square(t - ag::reduce_min(t, {1}, true)), {1}); };
  agtest::expect_three_way("int32 sum of squares, short rows", int_sum, {.rtol = 0, .atol = 0}, ints);
  auto int_jit = ag::function(int_sum);
  EXPECT_NE(int_jit.get_concrete_function(ints).llvm_ir(false).find("%acc = phi i32"), std::string::npos);
  const Tensor x = sample(ag::float32, {61, 3 * float_lanes / 2}, 18, Values::Moderate);
  expect_row_statistic_in_compositions(ag::function(variance), x, "a nested Function's variance, short rows");
}

TEST(JitRowReductions, LongRowsOnTwoThreadsUnderATapeAndInAStagedLoop) {
  const Tensor x = sample(ag::float32, {4096, 256}, 13, Values::Moderate);
  auto variance = [](Tensor t) { return ag::reduce_mean(ag::square(t - ag::reduce_mean(t, {1}, true)), {1}); };
  for (int threads : {1, 2}) {
    const ag::detail::ScopedNumThreads scoped(threads);
    agtest::expect_three_way("variance, " + std::to_string(threads) + " threads", variance, kTol, x);
  }
  auto jit = ag::function(variance);
  EXPECT_TRUE(agtest::ir_calls(jit.get_concrete_function(x).llvm_ir(true), "agc_rt_parallel_for"));
  const Tensor small = sample(ag::float32, {50, 128}, 14, Values::Moderate);
  expect_row_statistic_in_compositions(variance, small, "variance");
  // The tape outside the trace (the Function's gradient), and the variance as a nested Function.
  auto inner = ag::function(variance);
  auto outer = ag::function([&](Tensor t) { return ag::reduce_sum(inner(t * 2.f) * ag::reduce_sum(t, {1})); });
  ag::GradientTape eager_tape, staged_tape;
  eager_tape.watch(small);
  staged_tape.watch(small);
  const Tensor eager = eager_tape.gradient(ag::reduce_sum(variance(small * 2.f) * ag::reduce_sum(small, {1})), small);
  const Tensor compiled = staged_tape.gradient(outer(small), small);
  agtest::expect_same(eager, compiled, {.rtol = 1e-4, .atol = 1e-4}, "variance gradient, tape outside, nested Function");
  EXPECT_GE(outer.stats().compiles + outer.stats().disk_hits, 1);
}

// A softmax over ten classes (an MNIST classifier's, a batch of 4000), its gradient under a tape
// inside the trace and outside, a variance over partial rows in compositions, a nested Function
// in a staged loop, and a large operand split over two threads.
TEST(JitRowReductions, PartialRowVectorsInCompositions) {
  const Tensor logits = sample(ag::float32, {4000, 10}, 23, Values::Moderate);
  const Tensor target = sample(ag::float32, {4000, 10}, 24, Values::Moderate);
  const std::string ir = expect_softmax_gradient_both_ways(logits, target, "ten-class softmax");
  EXPECT_EQ(reads_a_partial_row_vector_in(ir), row_form_fits(10 * 4, 4000 * 10));

  const int64_t width = 3 * agtest::jit_vector_bytes() / 2 / 4 - 1;  // floats: 23 on AVX-512
  auto variance = [](Tensor t) { return ag::reduce_mean(ag::square(t - ag::reduce_mean(t, {1}, true)), {1}); };
  const Tensor rows = sample(ag::float32, {1500, width}, 25, Values::Moderate);
  expect_row_statistic_in_compositions(ag::function(variance), rows, "a nested Function's variance, partial rows");
  auto variance_jit = ag::function(variance);
  EXPECT_EQ(reads_a_partial_row_vector(variance_jit, rows), row_form_fits(width * 4, 1500 * width));

  const Tensor x = sample(ag::float32, {1500, width}, 26, Values::Moderate);
  EXPECT_EQ(reads_a_partial_row_vector_in(expect_normalizing_in_a_staged_loop(x, "nested, staged, partial rows")),
            row_form_fits(width * 4, 1500 * width));

  const Tensor large = sample(ag::float32, {30000, width}, 27, Values::Moderate);
  auto mean_square = [](Tensor t) { return ag::reduce_mean(ag::square(t), {1}); };
  for (int threads : {1, 2}) {
    const ag::detail::ScopedNumThreads scoped(threads);
    agtest::expect_three_way("large, partial rows, " + std::to_string(threads) + " threads", mean_square, kTol, large);
  }
  auto large_jit = ag::function(mean_square);
  if (row_form_fits(width * 4, 30000 * width)) {  // the row vectors' groups of rows split over the pool
    EXPECT_TRUE(reads_a_partial_row_vector(large_jit, large));
    EXPECT_TRUE(agtest::ir_calls(large_jit.get_concrete_function(large).llvm_ir(true), "agc_rt_parallel_for"));
  }
}

}  // namespace
