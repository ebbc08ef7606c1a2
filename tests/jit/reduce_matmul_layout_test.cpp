// Differential tests of reductions, arg-reductions, matmul (inline loops and the Eigen GEMM call),
// layout ops and sources: eager == interpreter == JIT.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using agtest::Values;

TEST(JitReduce, AllReductionsOverAxes) {
  uint64_t seed = 1;
  const std::vector<std::pair<ag::Shape, std::vector<int64_t>>> cases = {
      {{}, {}},        {{7}, {}},         {{7}, {0}},          {{0}, {0}},        {{3, 4}, {0}},    {{3, 4}, {1}},
      {{3, 4}, {0, 1}}, {{2, 3, 4}, {1}}, {{2, 3, 4}, {0, 2}}, {{2, 0, 4}, {1}},  {{2, 3, 4}, {2}}, {{5, 1, 3}, {0, 1}},
      {{4, 33}, {1}},  {{33, 4}, {0}},
  };
  for (const auto& [shape, axes] : cases)
    for (bool keep : {false, true}) {
      for (ag::DType d : agtest::numeric_dtypes()) {
        auto fn = [axes = axes, keep](ag::Tensor x) {
          return std::tuple{ag::reduce_sum(x, axes, keep), ag::reduce_mean(x, axes, keep), ag::reduce_max(x, axes, keep),
                            ag::reduce_min(x, axes, keep), ag::reduce_prod(x, axes, keep)};
        };
        const Values v = ag::is_floating(d) ? Values::Moderate : Values::Any;
        agtest::expect_three_way(fmt::format("reduce {} {} axes {} keep {}", ag::dtype_name(d), shape.str(), axes.size(), keep),
                                 fn, {.rtol = 1e-4, .atol = 1e-4}, agtest::sample(d, shape, seed++, v));
      }
      auto logical = [axes = axes, keep](ag::Tensor x) { return std::tuple{ag::reduce_any(x, axes, keep), ag::reduce_all(x, axes, keep)}; };
      agtest::expect_three_way("reduce bool " + shape.str(), logical, {}, agtest::sample(ag::bool_, shape, seed++));
    }
  // NaN propagates through max/min; fused producers feed the reduction loop.
  auto fused = [](ag::Tensor x) { return std::tuple{ag::reduce_max(x * 2.0f + 1.0f, {1}), ag::reduce_sum(ag::exp(x) - x, {0})}; };
  agtest::expect_three_way("fused reduce", fused, {.rtol = 1e-4, .atol = 1e-4}, agtest::sample(ag::float32, {9, 13}, 99, Values::Any));
}

TEST(JitReduce, ArgMaxArgMin) {
  uint64_t seed = 200;
  for (ag::DType d : agtest::numeric_dtypes())
    for (const ag::Shape& s : {ag::Shape{1}, ag::Shape{9}, ag::Shape{4, 5}, ag::Shape{2, 3, 4}})
      for (int64_t axis = -1; axis < s.rank(); ++axis) {
        auto fn = [axis](ag::Tensor x) { return std::tuple{ag::argmax(x, axis), ag::argmin(x, axis), ag::argmax(x * x, axis)}; };
        // Ties: small integers repeat, so "first occurrence" is exercised.
        const ag::Tensor x = ag::cast(ag::cast(agtest::sample(d, s, seed++, Values::Moderate), ag::int32) % 3, d);
        agtest::expect_three_way(fmt::format("arg {} {} axis {}", ag::dtype_name(d), s.str(), axis), fn, {}, x);
      }
  auto nan_first = [](ag::Tensor x) { return std::tuple{ag::argmax(x), ag::argmin(x)}; };
  agtest::expect_three_way("arg with NaN", nan_first, {}, ag::constant(std::vector<float>{NAN, 1, 5, 5, -2}, {5}));
}

TEST(JitMatMul, ShapesDtypesAndBatches) {
  uint64_t seed = 300;
  const std::vector<std::pair<ag::Shape, ag::Shape>> shapes = {
      {{1, 1}, {1, 1}},     {{2, 3}, {3, 4}},       {{10, 10}, {10, 10}}, {{5, 0}, {0, 3}},     {{0, 4}, {4, 2}},
      {{2, 3, 4}, {4, 5}},  {{2, 1, 3, 4}, {3, 4, 2}}, {{48, 40}, {40, 56}}, {{3, 64, 33}, {33, 65}}, {{1, 7}, {7, 1}},
      // Rows split into several vectors of the target's width (lower_matmul.cpp): 17 = 16 + 1,
      // 20 = 16 + 4 or 8 + 8 + 4, 32 = 2 or 4 whole vectors.
      {{3, 5}, {5, 17}},    {{4, 32}, {32, 20}},    {{2, 9}, {9, 32}},
      // Rows wider than one panel of 32 columns: whole panels, and a last one of 13, 1 or 4
      // columns; with k up to 64 unrolled, and k = 65 as a loop.
      {{1, 64}, {64, 64}},  {{3, 17}, {17, 45}},    {{5, 8}, {8, 33}},    {{2, 6}, {6, 100}},  {{1, 65}, {65, 40}},
  };
  for (ag::DType d : agtest::numeric_dtypes())
    for (const auto& [sa, sb] : shapes) {
      auto fn = [](ag::Tensor a, ag::Tensor b) { return ag::matmul(a, b); };
      const Values v = ag::is_floating(d) ? Values::Moderate : Values::NonZero;
      const ag::Tensor a = agtest::sample(d, sa, seed, v), b = agtest::sample(d, sb, seed + 1, v);
      seed += 2;
      agtest::expect_three_way(fmt::format("matmul {} {} {}", ag::dtype_name(d), sa.str(), sb.str()), fn,
                               {.rtol = 1e-4, .atol = 1e-3}, a, b);
    }
}

// The unoptimized IR of the small GEMM kernel `name` that a Function of `fn` compiles for (a, b);
// "" (and a failure) when there is none.
template <class F>
std::string gemm_kernel_ir(F fn, const ag::Tensor& a, const ag::Tensor& b, const std::string& name) {
  auto f = ag::function(fn);
  const std::string ir = f.get_concrete_function(a, b).llvm_ir(/*optimized=*/false);
  const size_t begin = ir.find("define internal void @" + name + "(");
  if (begin == std::string::npos) {
    ADD_FAILURE() << "no kernel " << name << " in\n" << ir;
    return {};
  }
  return ir.substr(begin, ir.find("\n}\n", begin) - begin);
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A small float product's kernel keeps at least 8 independent accumulators per step of k (rows
// in blocks: a float FMA's latency times its throughput), where one row at a time gave 2 on
// AVX-512: count the vector FMAs of the unoptimized kernel. k = 32 is a loop of 8 steps
// (kLoopKStep, lower_matmul.cpp: long straight blocks were slow to compile), so 8 x 8 at least.
// Values: as above.
TEST(JitMatMul, SmallFloatProductsUseEnoughAccumulators) {
  auto fn = [](ag::Tensor a, ag::Tensor b) { return ag::matmul(a, b); };
  const ag::Tensor a = ag::random_uniform({8, 32}, ag::float32, -1, 1, 70), b = ag::random_uniform({32, 32}, ag::float32, -1, 1, 71);
  const std::string kernel = gemm_kernel_ir(fn, a, b, "agc.gemm.f32.8x32x32");
  ASSERT_FALSE(kernel.empty());
  EXPECT_NE(kernel.find("gemm.k"), std::string::npos) << "a loop over k: " << kernel;
  EXPECT_GE(occurrences(kernel, "@llvm.fmuladd.v"), 8u * 8u) << kernel;
  agtest::expect_three_way("matmul f32 [8,32] x [32,32]", fn, {.rtol = 1e-4, .atol = 1e-4}, a, b);
}

// A product whose rows are wider than a panel (an RNN cell's [1,64] x [64,64]) is vector code, not
// a scalar loop (the kernel is emitted optimized: LLVM's vectorizer never sees it): a vector FMA per
// piece and step of k. With one row, the panel widens for independent accumulators while they fit
// the registers: on AVX-512 one panel of all 64 columns (four per k, no loop over panels), where
// panels of 32 gave two dependent FMA chains per k; on AVX2 and SSE, panels of 32 columns. The
// 64 steps of k are a loop of 8 (each one FMA per piece at least).
TEST(JitMatMul, WideRowsAreVectorPanels) {
  auto fn = [](ag::Tensor a, ag::Tensor b) { return ag::matmul(a, b); };
  const ag::Tensor a = ag::random_uniform({1, 64}, ag::float32, -1, 1, 72), b = ag::random_uniform({64, 64}, ag::float32, -1, 1, 73);
  const std::string kernel = gemm_kernel_ir(fn, a, b, "agc.gemm.f32.1x64x64");
  ASSERT_FALSE(kernel.empty());
  if (agtest::jit_vector_bytes() == 64) EXPECT_EQ(kernel.find("gemm.cols"), std::string::npos) << kernel;
  else EXPECT_NE(kernel.find("gemm.cols"), std::string::npos) << kernel;
  EXPECT_NE(kernel.find("gemm.k"), std::string::npos) << "a loop over k: " << kernel;
  EXPECT_GE(occurrences(kernel, "@llvm.fmuladd.v"), 8u) << "one vector FMA per step of k at least: " << kernel;
  EXPECT_EQ(kernel.find("@llvm.fmuladd.f32"), std::string::npos) << "a scalar FMA: " << kernel;
  agtest::expect_three_way("matmul f32 [1,64] x [64,64]", fn, {.rtol = 1e-4, .atol = 1e-4}, a, b);
}

TEST(JitLayout, ViewsAndCopies) {
  uint64_t seed = 400;
  for (ag::DType d : {ag::bool_, ag::int32, ag::int64, ag::float32, ag::float64}) {
    const ag::Tensor x = agtest::sample(d, {2, 3, 4}, seed++);
    auto views = [](ag::Tensor t) {
      return std::tuple{ag::reshape(t, {4, -1}), ag::reshape(t, {24}), ag::expand_dims(t, 1), ag::expand_dims(t, -1),
                        ag::squeeze(ag::expand_dims(t, 0)), ag::shape_of(t), ag::identity(t)};
    };
    agtest::expect_three_way("views " + std::string(ag::dtype_name(d)), views, {}, x);
    auto copies = [](ag::Tensor t) {
      return std::tuple{ag::transpose(t), ag::transpose(t, {1, 0, 2}), ag::transpose(t, {0, 2, 1}),
                        ag::slice(t, {0, 1, 1}, {2, 2, -1}), ag::slice(t, {1, 0, 0}, {1, -1, 2}),
                        ag::concat({t, t}, 0), ag::concat({t, ag::slice(t, {0, 0, 0}, {-1, -1, 1})}, 2),
                        ag::stack({t, t}, 1), t[1], ag::squeeze(ag::slice(t, {0, 1, 0}, {2, 1, 4}), {1})};
    };
    agtest::expect_three_way("copies " + std::string(ag::dtype_name(d)), copies, {}, x);
  }
  auto gathers = [](ag::Tensor p, ag::Tensor i) {
    return std::tuple{ag::gather(p, i, 0), ag::gather(p, ag::reshape(i, {2, 2}), 1), ag::gather(p, i % 3, -1),
                      ag::gather(p, ag::constant(std::vector<int64_t>{2, 0}, {2}), 0), p[ag::Tensor(int64_t{1})]};
  };
  agtest::expect_three_way("gather", gathers, {}, agtest::sample(ag::float32, {3, 4, 3}, 7), ag::constant(std::vector<int32_t>{2, 0, 1, 1}, {4}));
  auto scalars = [](ag::Tensor x) {
    return std::tuple{ag::reshape(x, {1, 1}), ag::expand_dims(x, 0), ag::shape_of(x), ag::concat({ag::reshape(x, {1}), ag::reshape(x, {1})}, 0)};
  };
  agtest::expect_three_way("scalar layout", scalars, {}, ag::Tensor(3.5f));
}

// squeeze() without axes resolves its axes while tracing: a dim unknown in the input_signature
// stays, in the interpreter and in compiled code alike; listed, it is checked at run time.
// A transpose whose output walk would read the input a page apart, or whose input is larger than an
// L2 cache, copies in tiles (lower_layout.cpp): edge tiles (dims not multiples of the tile), rank
// 3, every dtype width, dims known only at run time; the IR has the tile loops, and a small
// transpose read with a short stride keeps the plain walk.
TEST(JitLayout, TiledTransposes) {
  struct Case {
    ag::Shape shape;
    std::vector<int64_t> perm;
    int64_t read_stride;  // elements between the input elements the output's last dim reads
  };
  const std::vector<Case> cases = {
      {{20, 1030}, {1, 0}, 1030}, {{3, 17, 1100}, {2, 0, 1}, 1100}, {{1100, 5, 3}, {1, 2, 0}, 1},
      {{40000, 9}, {1, 0}, 9},    {{64, 48}, {1, 0}, 48},
  };
  uint64_t seed = 900;
  for (ag::DType d : {ag::float32, ag::float64, ag::int32, ag::int64, ag::bool_})
    for (const Case& c : cases) {
      auto fn = [perm = c.perm](ag::Tensor x) { return ag::transpose(x, perm); };
      const ag::Tensor x = agtest::sample(d, c.shape, seed++);
      const std::string what = fmt::format("transpose {} {}", ag::dtype_name(d), c.shape.str());
      agtest::expect_three_way(what, fn, {}, x);
      const std::string ir = ag::function(fn).get_concrete_function(x).llvm_ir(/*optimized=*/false);
      // Tiled: a read stride of a page or more, or an input larger than 1 MiB (and never when
      // the output's last dim reads the input contiguously).
      const int64_t bytes = static_cast<int64_t>(ag::dtype_size(d));
      const bool tiled = c.read_stride > 1 && (c.read_stride * bytes >= 4096 || c.shape.num_elements() * bytes > (1 << 20));
      EXPECT_EQ(ir.find("tiles:") != std::string::npos, tiled) << what;
    }
  // Dims known only at run time: tiled, whatever they turn out to be.
  auto fn = [](ag::Tensor x) { return ag::transpose(x, {1, 0}); };
  const ag::FunctionOptions unknown{.input_signature = {ag::TensorSpec({-1, -1}, ag::float32)}};
  for (const ag::Shape& s : {ag::Shape{3, 5}, ag::Shape{33, 70}})
    agtest::expect_three_way_with("transpose of unknown dims " + s.str(), fn, unknown, {}, agtest::sample(ag::float32, s, seed++));
  auto f = ag::function(fn, unknown);
  EXPECT_NE(f.get_concrete_function(ag::TensorSpec({-1, -1}, ag::float32)).llvm_ir(false).find("tiles:"), std::string::npos);
}

TEST(JitLayout, SqueezeWithUnknownDims) {
  auto squeeze_all = [](ag::Tensor x) { return ag::squeeze(x) * 2.0f; };
  auto squeeze_listed = [](ag::Tensor x) { return ag::squeeze(x, {0}) * 2.0f; };
  const ag::FunctionOptions sig{.input_signature = {ag::TensorSpec({-1, 1, 3}, ag::float32)}};
  ag::FunctionOptions interp_sig = sig;
  interp_sig.jit_compile = false;
  auto all_jit = ag::function(squeeze_all, sig), all_interp = ag::function(squeeze_all, interp_sig);
  auto listed_jit = ag::function(squeeze_listed, sig), listed_interp = ag::function(squeeze_listed, interp_sig);
  for (int64_t n : {1, 4}) {
    const ag::Tensor x = ag::random_uniform({n, 1, 3}, ag::float32, -1, 1, static_cast<uint64_t>(n));
    const ag::Tensor a = all_jit(x);
    EXPECT_EQ(a.shape(), ag::Shape({n, 3}));
    agtest::expect_same(all_interp(x), a, {}, "squeeze() n=" + std::to_string(n));
  }
  const ag::Tensor one = ag::ones({1, 1, 3});
  EXPECT_EQ(listed_jit(one).shape(), ag::Shape({1, 3}));
  agtest::expect_same(listed_interp(one), listed_jit(one), {}, "squeeze({0})");
  EXPECT_THROW(listed_jit(ag::ones({2, 1, 3})), ag::InvalidArgumentError);
  EXPECT_THROW(listed_interp(ag::ones({2, 1, 3})), ag::InvalidArgumentError);
}

TEST(JitSource, RangeFillConstants) {
  auto ranges = [](ag::Tensor n, ag::Tensor f) {
    const ag::Tensor m3(int64_t{-3}), m2(int64_t{-2}), five(int64_t{5});
    return std::tuple{ag::range(n), ag::range(n, m3, m2), ag::range(five, n), ag::range(f, f * 4.0f, ag::Tensor(0.7f)),
                      ag::range(n * int64_t{0} + 3, n, 4), ag::range(f, f, ag::Tensor(1.0f))};
  };
  agtest::expect_three_way("ranges", ranges, {}, ag::Tensor(int64_t{11}), ag::Tensor(1.25f));
  agtest::expect_three_way("ranges small", ranges, {}, ag::Tensor(int64_t{0}), ag::Tensor(-2.0f));
  auto consts = [](ag::Tensor x) {
    return std::tuple{x + ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}}), ag::eye(2, ag::float32) * x, ag::constant({true, false}) == (x > 2.0f)};
  };
  agtest::expect_three_way("constants", consts, {}, agtest::sample(ag::float32, {2}, 8, Values::Moderate));
}

}  // namespace
