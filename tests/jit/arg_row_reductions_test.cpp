// Argmax and argmin over the last axis of rows of at most two vectors take the vector form
// (Emitter::arg_reduce_rows): a row's vectors, a horizontal maximum or minimum, the first lane
// equal to it. The answers must be the scalar walk's, which the eager kernels and the graph
// interpreter share: the first occurrence of the best; NaN never compares better, so a row that
// starts with NaN, or holds only NaN, gives 0; -0 and +0 are equal. Three-way for both dtypes,
// whole and partial rows, fused operands, unknown row counts, a staged loop; the form checked in
// the IR (its `arg.rows` select), and its absence where it does not apply.
#include <cmath>
#include <limits>

#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using agtest::sample;
using agtest::Values;

const agtest::Tol kExact{.rtol = 0, .atol = 0};

bool takes_the_vector_form(auto& f, const auto&... args) {
  return f.get_concrete_function(args...).llvm_ir(false).find("%arg.rows") != std::string::npos;
}

// Whether rows of `width` elements of `d` take it on the JIT's level: at most two vectors, whole,
// or (row_reductions_test.cpp's rule) ending in a partial one where masked loads are cheap and
// there are at least 2^15 elements (or an unknown number).
bool vector_form_fits(int64_t width, ag::DType d, int64_t elements) {
  const int64_t vector = agtest::jit_vector_bytes(), bytes = width * static_cast<int64_t>(ag::dtype_size(d));
  if (bytes > 2 * vector) return false;
  if (bytes % vector == 0) return true;
  if (elements >= 0 && elements < (1 << 15)) return false;  // -1: an unknown row count
  return vector == 64 ? bytes > vector / 2 : vector == 32 && bytes > vector;
}

TEST(JitArgRowReductions, EveryWidthAroundOneAndTwoVectors) {
  const int64_t float_lanes = agtest::jit_vector_bytes() / 4;
  for (ag::DType d : {ag::float32, ag::float64}) {
    const int64_t lanes = float_lanes / (d == ag::float64 ? 2 : 1);
    for (int64_t width : {lanes / 2 + 1, lanes - 1, lanes, lanes + 3, 2 * lanes, 2 * lanes + 1})
      for (int64_t rows : {17, 4001}) {
        // Rounded values: ties within a row, which the first occurrence decides.
        const Tensor x = ag::cast(ag::round(sample(ag::float32, {rows, width}, 41, Values::Moderate) * 0.25f), d);
        const std::string tag = std::string(ag::dtype_name(d)) + " " + std::to_string(rows) + " x " + std::to_string(width);
        auto f = [](Tensor t) { return std::make_tuple(ag::argmax(t, 1), ag::argmin(t * 2.0 - 1.0, 1)); };
        agtest::expect_three_way("arg rows, " + tag, f, kExact, x);
        auto jit = ag::function(f);
        EXPECT_EQ(takes_the_vector_form(jit, x), vector_form_fits(width, d, rows * width)) << tag;
      }
  }
}

TEST(JitArgRowReductions, NanInfinitiesAndSignedZerosAsTheScalarWalk) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const int64_t width = agtest::jit_vector_bytes() / 4 + 3;  // a whole vector and a partial one
  const int64_t rows = 4000;
  std::vector<float> v(static_cast<size_t>(rows * width));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((k * 7919) % 23) - 11.0f;
  auto at = [&](int64_t r, int64_t c) -> float& { return v[static_cast<size_t>(r * width + c)]; };
  at(1, 0) = nan;                                                     // NaN first: 0
  at(2, 3) = nan;                                                     // NaN inside: skipped
  for (int64_t c = 0; c < width; ++c) at(3, c) = nan;                 // only NaN: 0
  for (int64_t c = 0; c < width; ++c) at(4, c) = -inf;                // only -inf: 0
  at(5, width - 1) = inf;                                             // the best in the partial vector
  at(6, width - 1) = -inf;                                            // the worst in the partial vector
  for (int64_t c = 0; c < width; ++c) at(7, c) = c == 0 ? -0.0f : 0.0f;  // -0 then +0: equal, the first
  for (int64_t c = 0; c < width; ++c) at(8, c) = c < 2 ? -inf : nan;     // -inf then NaN
  at(9, 0) = 100.0f, at(9, width - 1) = 100.0f;                       // a tie across vectors
  const Tensor x = ag::constant(v, {rows, width});
  auto f = [](Tensor t) { return std::make_tuple(ag::argmax(t, 1), ag::argmin(t, 1)); };
  agtest::expect_three_way("special values", f, kExact, x);
  auto jit = ag::function(f);
  const auto [maxima, minima] = jit(x);
  const std::vector<int64_t> mx = maxima.to_vector<int64_t>(), mn = minima.to_vector<int64_t>();
  EXPECT_EQ(mx[1], 0);
  EXPECT_EQ(mn[1], 0);
  EXPECT_EQ(mx[3], 0);
  EXPECT_EQ(mx[4], 0);
  EXPECT_EQ(mx[5], width - 1);
  EXPECT_EQ(mn[6], width - 1);
  EXPECT_EQ(mx[7], 0);
  EXPECT_EQ(mn[7], 0);
  EXPECT_EQ(mx[8], 0);
  EXPECT_EQ(mx[9], 0);
  EXPECT_EQ(takes_the_vector_form(jit, x), vector_form_fits(width, ag::float32, rows * width));
}

TEST(JitArgRowReductions, FusedOperandsUnknownRowsAndAStagedLoop) {
  // k-means' assignment over 12 clusters: the distances fused into the argmin's rows.
  const int64_t clusters = 12;
  auto assign = [](Tensor points, Tensor centroids) {
    return ag::argmin(ag::reduce_sum(ag::square(ag::expand_dims(points, 1) - ag::expand_dims(centroids, 0)), {2}), 1);
  };
  const Tensor points = sample(ag::float32, {5000, 2}, 42, Values::Moderate);
  const Tensor centroids = sample(ag::float32, {clusters, 2}, 43, Values::Moderate);
  agtest::expect_three_way("k-means assignment", assign, kExact, points, centroids);

  const int64_t width = agtest::jit_vector_bytes() / 4 + 5;
  auto f = [](Tensor t) { return ag::argmax(ag::exp(t) - t * 0.5f, 1); };
  const ag::FunctionOptions options{.input_signature = {ag::TensorSpec({-1, width}, ag::float32, "t")}};
  auto jit = ag::function(f, options);
  for (int64_t rows : {1, 7, 33, 3000}) {
    const Tensor x = sample(ag::float32, {rows, width}, 44, Values::Moderate);
    agtest::expect_three_way_with("unknown rows, " + std::to_string(rows), f, options, kExact, x);
    agtest::expect_same(f(x), jit(x), kExact, "one trace, " + std::to_string(rows) + " rows");
  }
  EXPECT_EQ(jit.stats().traces, 1);
  EXPECT_EQ(takes_the_vector_form(jit, sample(ag::float32, {5, width}, 44, Values::Moderate)), vector_form_fits(width, ag::float32, -1));

  // Greedy decoding's step: the next token is the argmax of the logits, in a staged loop.
  auto decode = [](Tensor logits, Tensor steps) {
    Tensor tokens = ag::zeros({logits.shape()[0]}, ag::int64);
    Tensor i = 0;
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     logits = logits * 0.9f + ag::cast(ag::expand_dims(tokens, 1), ag::float32) * 0.01f;
                     tokens = ag::argmax(logits, 1);
                     i += 1;
                   },
                   ag::state(logits, tokens, i), {"logits", "tokens", "i"}, AG_SOURCE_LOC("arg_row_reductions_test.cpp", 113));
    return tokens;
  };
  const Tensor logits = sample(ag::float32, {64, 2 * agtest::jit_vector_bytes() / 4}, 45, Values::Moderate);
  agtest::expect_three_way("greedy decoding", decode, kExact, logits, ag::constant(int32_t{5}));
  auto decode_jit = ag::function(decode);
  EXPECT_TRUE(takes_the_vector_form(decode_jit, logits, ag::constant(int32_t{5})));

  // A nested Function's argmax picks the logit a loss keeps: its gradient under a tape outside
  // the trace and inside it, against eager.
  auto pick = ag::function([](Tensor z) { return ag::one_hot(ag::argmax(z, 1), z.shape()[1]); });
  auto picked_loss = [&](Tensor z) { return ag::reduce_sum(pick(z) * z * z); };
  ag::GradientTape eager_tape, staged_tape;
  eager_tape.watch(logits);
  staged_tape.watch(logits);
  auto staged_loss = ag::function(picked_loss);
  const Tensor eager = eager_tape.gradient(ag::reduce_sum(ag::one_hot(ag::argmax(logits, 1), logits.shape()[1]) * logits * logits), logits);
  agtest::expect_same(eager, staged_tape.gradient(staged_loss(logits), logits), kExact, "argmax's pick, tape outside");
  auto inside = [&](Tensor z) {
    ag::GradientTape tape;
    tape.watch(z);
    return tape.gradient(picked_loss(z), z);
  };
  agtest::expect_three_way("argmax's pick, tape inside", inside, kExact, logits);
  EXPECT_TRUE(takes_the_vector_form(pick, logits));
}

}  // namespace
