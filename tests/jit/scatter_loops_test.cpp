// Scatters compiled as loops (fusion.h, compiled_scatter; jit/src/lower/lower_scatter.cpp):
// a segment sum of gathered values is one loop over the edges, its gather and elementwise
// producers fused, its zeros written by its own loop, and no call of the runtime's kernel. Values
// are the eager kernel's bit for bit (the same order of additions), errors its words: a scatter
// index out of range, a gather index out of range, and both (the gather's first, as eagerly).
// In combination: four ops and four dtypes, unknown dims, a staged loop, a tape inside the trace
// and outside it, a nested Function.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::fused_plan;
using agtest::plan_line;
using agtest::sample;
using agtest::Values;

constexpr agtest::Tol kExact{.rtol = 0, .atol = 0};

Tensor int_vector(std::vector<int32_t> v) { return ag::constant(v, {static_cast<int64_t>(v.size())}); }

// Edges of a small graph: 12 edges over 6 nodes, repeated targets, every node a source.
const Tensor kSrc = int_vector({0, 1, 2, 3, 4, 5, 0, 2, 4, 1, 3, 5});
const Tensor kDst = int_vector({1, 2, 0, 0, 5, 3, 2, 2, 0, 4, 4, 1});

auto propagate = [](Tensor x, Tensor src, Tensor dst) {
  return ag::unsorted_segment_sum(ag::gather(x * 0.5f, src), dst, 6);
};

bool fused(const std::string& line) { return line.find("[fused") != std::string::npos; }

TEST(JitScatterLoops, ASegmentSumOfGatheredValuesIsOneLoopWithoutTheRuntimeKernel) {
  const Tensor x = sample(ag::float32, {6, 3}, 1, Values::Moderate);
  const std::string plan = fused_plan(propagate, {}, x, kSrc, kDst);
  ASSERT_FALSE(plan_line(plan, "Gather").empty()) << plan;
  EXPECT_TRUE(fused(plan_line(plan, "Gather"))) << plan;
  EXPECT_FALSE(fused(plan_line(plan, "Mul"))) << plan;  // the gather's params: a buffer
  auto f = ag::function(propagate);
  const std::string ir = f.get_concrete_function(x, kSrc, kDst).llvm_ir(false);
  EXPECT_EQ(ir.find("agc_rt_kernel"), std::string::npos) << ir;
  const ag::FunctionStats s = agtest::expect_three_way("segment sum of a gather", propagate, kExact, x, kSrc, kDst);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

TEST(JitScatterLoops, AnElementwiseProducerOfGatheredValuesFusesToo) {
  auto weighted = [](Tensor x, Tensor w, Tensor src, Tensor dst) {
    return ag::unsorted_segment_sum(ag::gather(x, src) * w + 1.0, dst, 6);
  };
  const Tensor x = sample(ag::float64, {6}, 2, Values::Moderate), w = sample(ag::float64, {12}, 3, Values::Moderate);
  const std::string plan = fused_plan(weighted, {}, x, w, kSrc, kDst);
  EXPECT_TRUE(fused(plan_line(plan, "Gather"))) << plan;
  EXPECT_TRUE(fused(plan_line(plan, "Mul"))) << plan;
  agtest::expect_three_way("weighted", weighted, kExact, x, w, kSrc, kDst);
}

// Every compiled scatter, every dtype compiled: duplicates (the last update wins, sums in index
// order), negative segment ids dropped, a NaN update propagating through a max, rows of 3.
template <class T>
void four_scatters(ag::DType d) {
  auto fn = [](Tensor x, Tensor u, Tensor ids) {
    const Tensor pos = ag::abs(ids);
    return std::tuple{ag::unsorted_segment_sum(u, ids, 4), ag::unsorted_segment_max(u * u, ids, 4),
                      ag::tensor_scatter_nd_update(x, ag::expand_dims(pos, 1), u),
                      ag::tensor_scatter_nd_add(x, ag::expand_dims(pos, 1), u - x(ag::Slice{0, 1}))};
  };
  const Tensor x = sample(d, {4, 3}, 4, Values::Moderate), u = sample(d, {5, 3}, 5, Values::Moderate);
  const Tensor ids = int_vector({2, -1, 0, 2, 3});
  agtest::expect_three_way(std::string("four scatters, ") + std::string(ag::dtype_name(d)), fn, kExact, x, u, ids);
  auto f = ag::function(fn);
  EXPECT_EQ(f.get_concrete_function(x, u, ids).llvm_ir(false).find("agc_rt_kernel"), std::string::npos) << ag::dtype_name(d);
}

TEST(JitScatterLoops, FourOpsFourDtypes) {
  four_scatters<float>(ag::float32);
  four_scatters<double>(ag::float64);
  four_scatters<int32_t>(ag::int32);
  four_scatters<int64_t>(ag::int64);
}

TEST(JitScatterLoops, ANanUpdateWinsTheMax) {
  auto fn = [](Tensor u, Tensor ids) { return ag::unsorted_segment_max(u, ids, 3); };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor u = ag::constant(std::vector<float>{1, nan, 5, -2, 7}, {5});
  agtest::expect_three_way("max with a NaN", fn, kExact, u, int_vector({0, 0, 0, 1, 1}));
}

// Rows of whole vector registers are vector code (a block of a row: one load of the gathered
// row, of the edge weight broadcast, of the result), with the scalar loop's values bit for bit:
// sums, a max with a NaN, an update, float32 and float64.
template <class T>
void rows_of_whole_vectors(ag::DType d) {
  const int64_t width = 2 * agtest::jit_vector_bytes() / static_cast<int64_t>(sizeof(T));
  auto fn = [](Tensor x, Tensor w, Tensor src, Tensor dst) {
    const Tensor messages = ag::gather(x, src) * w;
    return std::tuple{ag::unsorted_segment_sum(messages, dst, 6), ag::unsorted_segment_max(ag::gather(x, dst) - w, src, 6),
                      ag::tensor_scatter_nd_update(x, ag::expand_dims(src(ag::Slice{0, 6}), 1), ag::gather(x, dst(ag::Slice{0, 6})))};
  };
  std::vector<T> xs(static_cast<size_t>(6 * width));
  for (size_t k = 0; k < xs.size(); ++k) xs[k] = static_cast<T>((static_cast<int64_t>(k) * 37 % 23) - 11) / T(7);
  xs[5] = std::numeric_limits<T>::quiet_NaN();
  const Tensor x = ag::constant(xs, {6, width}), w = sample(d, {12, 1}, 9, Values::Moderate);
  agtest::expect_three_way("rows of whole vectors", fn, kExact, x, w, kSrc, kDst);
  auto f = ag::function(fn);
  const std::string ir = f.get_concrete_function(x, w, kSrc, kDst).llvm_ir(false);
  const std::string vector_type = fmt::format("<{} x {}>", agtest::jit_vector_bytes() / static_cast<int64_t>(sizeof(T)),
                                              sizeof(T) == 4 ? "float" : "double");
  EXPECT_NE(ir.find(vector_type), std::string::npos) << vector_type << "\n" << ir;
}

TEST(JitScatterLoops, RowsOfWholeVectorsAreVectorCode) {
  rows_of_whole_vectors<float>(ag::float32);
  rows_of_whole_vectors<double>(ag::float64);
}

// The backward pass of a message-passing step under a tape inside the trace: the gradient of a
// segment sum gathers by the ids with the negative ones dropped (a bool mask in memory), scaled
// by the edge weights, and sums into the sources. Its rows are vector code too: the mask is one
// byte broadcast along the row (a GCN's step: 1.21 -> 0.98-1.01x a hand-written one).
template <class T>
void gradient_rows_of_whole_vectors(ag::DType d) {
  const int64_t width = 2 * agtest::jit_vector_bytes() / static_cast<int64_t>(sizeof(T));
  auto fn = [](Tensor x, Tensor w, Tensor src, Tensor dst) {
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor loss = ag::reduce_sum(ag::square(ag::unsorted_segment_sum(ag::gather(x, src) * w, dst, 6)));
    return std::tuple{loss, tape.gradient(loss, x)};
  };
  const Tensor x = sample(d, {6, width}, 21, Values::Moderate), w = sample(d, {12, 1}, 22, Values::Moderate);
  agtest::expect_three_way("the gradient's rows", fn, {.rtol = 1e-6, .atol = 1e-6}, x, w, kSrc, int_vector({1, 2, 0, -1, 5, 3, 2, 2, 0, -3, 4, 1}));
  auto f = ag::function(fn);
  const std::string ir = f.get_concrete_function(x, w, kSrc, kDst).llvm_ir(false);
  const std::string mask = fmt::format("<{} x i1>", agtest::jit_vector_bytes() / static_cast<int64_t>(sizeof(T)));
  EXPECT_NE(ir.find(mask), std::string::npos) << "the masked gather's rows are not vector code\n" << ir;
}

TEST(JitScatterLoops, TheGradientsRowsAreVectorCodeWithTheirMask) {
  gradient_rows_of_whole_vectors<float>(ag::float32);
  gradient_rows_of_whole_vectors<double>(ag::float64);
}

// Eager raises first what it meets first: the gather's check of every index before the scatter
// starts. The messages must be the eager ones, word for word.
template <class F, class... Args>
void expect_same_error(F fn, const std::string& needle, const Args&... args) {
  std::string eager, jit;
  try {
    fn(args...);
  } catch (const ag::InvalidArgumentError& e) {
    eager = e.what();
  }
  auto f = ag::function(fn);
  try {
    f(args...);
  } catch (const ag::InvalidArgumentError& e) {
    jit = e.what();
  }
  EXPECT_NE(eager.find(needle), std::string::npos) << eager;
  EXPECT_EQ(jit, eager);
  EXPECT_GE(f.stats().compiles + f.stats().disk_hits, 1);
}

TEST(JitScatterLoops, IndexErrorsAreTheEagerOnes) {
  const Tensor x = sample(ag::float32, {6, 3}, 6, Values::Moderate);
  expect_same_error(propagate, "index 9 is out of range [0, 6)", x, kSrc, int_vector({1, 2, 0, 0, 9, 3, 2, 2, 0, 4, 4, 1}));
  expect_same_error(propagate, "index 7 is out of range [0, 6)", x, int_vector({0, 1, 2, 3, 4, 5, 0, 2, 4, 1, 3, 7}), kDst);
  // The scatter's bad index comes first in the loop (edge 1), the gather's at the last edge:
  // eager code reports the gather's.
  expect_same_error(propagate, "index 8 is out of range", x, int_vector({0, 1, 2, 3, 4, 5, 0, 2, 4, 1, 3, 8}),
                    int_vector({1, 9, 0, 0, 5, 3, 2, 2, 0, 4, 4, 1}));
  // tensor_scatter_nd_update checks its indices before it scatters (an assertion in the graph).
  auto update = [](Tensor x, Tensor idx) { return ag::tensor_scatter_nd_update(x, ag::expand_dims(idx, 1), x); };
  expect_same_error(update, "every index must be in [0, dim)", x, int_vector({0, 1, -1, 3, 4, 5}));
}

// No updates (every segment keeps its zero), no segments (any id of 0 or more is out of range,
// negative ones are dropped), one update row of one element (a register, not a buffer). Eager code checked no
// index when its result was empty until stop 72.
TEST(JitScatterLoops, EmptyUpdatesNoSegmentsAndOneElement) {
  const ag::FunctionOptions opts{.input_signature = {TensorSpec({-1}, ag::float32), TensorSpec({-1}, ag::int32)}};
  auto four = [](Tensor u, Tensor ids) { return ag::unsorted_segment_sum(ag::gather(u, ag::abs(ids)) * 2.f, ids, 4); };
  auto jit = ag::function(four, opts);
  const Tensor none = ag::constant(std::vector<float>{}, {0});
  agtest::expect_same(four(none, int_vector({})), jit(none, int_vector({})), kExact, "no updates");
  const Tensor one = ag::constant(std::vector<float>{3.f}, {1});
  agtest::expect_same(four(one, int_vector({0})), jit(one, int_vector({0})), kExact, "one update");
  auto zero_segments = [](Tensor u, Tensor ids) { return ag::unsorted_segment_sum(u, ids, 0); };
  const Tensor two = ag::constant(std::vector<float>{1.f, 2.f}, {2});
  agtest::expect_three_way("negative ids into no segments", zero_segments, kExact, two, int_vector({-1, -3}));
  expect_same_error(zero_segments, "index 0 is out of range [0, 0)", two, int_vector({-1, 0}));
}

TEST(JitScatterLoops, UnknownDimsAndTheGatherAsTheUpdatesItself) {
  const ag::FunctionOptions opts{
      .input_signature = {TensorSpec({-1, 2}, ag::float64), TensorSpec({-1}, ag::int32), TensorSpec({-1}, ag::int32)}};
  auto fn = [](Tensor x, Tensor src, Tensor dst) {
    return std::tuple{ag::unsorted_segment_sum(ag::gather(x, src), dst, 6),
                      ag::unsorted_segment_sum(ag::gather(x + 1.0, src) * 2.0, dst, 6)};
  };
  const std::string plan = fused_plan(fn, opts, sample(ag::float64, {6, 2}, 7, Values::Moderate), kSrc, kDst);
  // The first gather is the updates themselves; the second, of unknown dims under a multiply,
  // is not known to be read at the loop's index: a buffer.
  const std::string first = plan_line(plan, "Gather");
  const std::string second = plan_line(plan.substr(plan.find(first) + first.size()), "Gather");
  ASSERT_FALSE(second.empty()) << plan;
  EXPECT_TRUE(fused(first)) << plan;
  EXPECT_FALSE(fused(second)) << plan;
  auto jit = ag::function(fn, opts);
  for (int64_t nodes : {6, 9}) {
    const Tensor x = sample(ag::float64, {nodes, 2}, static_cast<uint64_t>(nodes), Values::Moderate);
    const Tensor src = ag::range(0, 20, 1) % static_cast<int32_t>(nodes);
    const Tensor dst = ag::range(0, 20, 1) * 3 % 7 - 1;  // -1 .. 5: the -1s dropped
    agtest::expect_same(fn(x, src, dst), jit(x, src, dst), kExact, "nodes " + std::to_string(nodes));
  }
  EXPECT_EQ(jit.stats().traces, 1);
}

// A base filled with an argument (not folded into a constant): the fill fused into the
// scatter's first loop, the updates into its second.
TEST(JitScatterLoops, AFilledBaseIsWrittenByTheScattersLoop) {
  auto fn = [](Tensor x, Tensor level, Tensor idx) {
    return ag::tensor_scatter_nd_add(ag::fill({6, 3}, level), ag::expand_dims(idx, 1), x * 2.f);
  };
  const Tensor x = sample(ag::float32, {6, 3}, 10, Values::Moderate), level = ag::constant(0.25f), idx = int_vector({5, 0, 5, 1, 2, 3});
  const std::string plan = fused_plan(fn, {}, x, level, idx);
  ASSERT_FALSE(plan_line(plan, "Fill").empty()) << plan;
  EXPECT_TRUE(fused(plan_line(plan, "Fill"))) << plan;
  EXPECT_TRUE(fused(plan_line(plan, "Mul"))) << plan;
  agtest::expect_three_way("filled base", fn, kExact, x, level, idx);
}

// A Function holding a segment sum of gathered rows, under a tape outside the trace and called
// from another Function: eager == interpreter == JIT, values and gradient.
TEST(JitScatterLoops, UnderATapeOutsideTheTraceAndNested) {
  const Tensor x = sample(ag::float64, {6, 4}, 11, Values::Moderate);
  auto body = [](Tensor in, Tensor src, Tensor dst) {
    return ag::reduce_sum(ag::square(ag::unsorted_segment_sum(ag::gather(in, src) * 0.5, dst, 6)));
  };
  auto run = [&](int mode) {
    auto inner = ag::function(body, {.jit_compile = mode == 2});
    auto outer = ag::function([&](Tensor in, Tensor src, Tensor dst) { return inner(ag::tanh(in), src, dst) * 2.0; },
                              {.jit_compile = mode == 2});
    std::vector<Tensor> out;
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor loss = mode == 0 ? body(x, kSrc, kDst) : inner(x, kSrc, kDst);
    out.push_back(loss);
    out.push_back(tape.gradient(loss, x));
    out.push_back(mode == 0 ? body(ag::tanh(x), kSrc, kDst) * 2.0 : outer(x, kSrc, kDst));
    if (mode == 2) EXPECT_EQ(inner.get_concrete_function(x, kSrc, kDst).llvm_ir(false).find("agc_rt_kernel"), std::string::npos);
    return out;
  };
  const auto eager = run(0);
  agtest::expect_same(eager, run(1), {.rtol = 1e-12, .atol = 1e-12}, "interpreter");
  agtest::expect_same(eager, run(2), {.rtol = 1e-12, .atol = 1e-12}, "jit");
}

// PageRank's power iteration in a staged loop, and its gradient with a tape inside the trace:
// the gradient of a gather is a segment sum (compiled), of a segment sum a gather.
TEST(JitScatterLoops, AStagedPowerIterationAndItsGradient) {
  auto ranks = [](Tensor x, Tensor src, Tensor dst, Tensor steps) {
    Tensor r = x;
    Tensor i = 0;
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     r = 0.15 / 6 + 0.85 * ag::unsorted_segment_sum(ag::gather(r * 0.5, src), dst, 6);
                     i += 1;
                   },
                   ag::state(r, i), {"r", "i"}, AG_SOURCE_LOC("scatter_loops_test.cpp", 139));
    return r;
  };
  const Tensor x = ag::fill({6}, ag::constant(1.0 / 6));
  agtest::expect_three_way("power iteration", ranks, kExact, x, kSrc, kDst, ag::constant(20));
  auto grad = [](Tensor w, Tensor src, Tensor dst) {
    ag::GradientTape tape;
    tape.watch(w);
    const Tensor h = ag::unsorted_segment_sum(ag::gather(ag::tanh(w), src) * ag::expand_dims(ag::cast(src + 1, ag::float64), 1), dst, 6);
    const Tensor loss = ag::reduce_sum(h * h);
    return std::tuple{loss, tape.gradient(loss, w)};
  };
  agtest::expect_three_way("gradient", grad, {.rtol = 1e-12, .atol = 1e-12}, sample(ag::float64, {6, 2}, 8, Values::Moderate), kSrc, kDst);
}

}  // namespace
