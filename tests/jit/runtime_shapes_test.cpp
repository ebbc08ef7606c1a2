// Shapes known only at run time (input_signature with unknown dims): broadcasting where an
// unknown dim turns out to be 1 against a larger dim (the run-time stride select of the fused
// loops), empty tensors through the layout ops, and run-time shape errors of compiled code
// (InvalidArgumentError naming the op and the line). Values: eager == interpreter == JIT.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::expect_invalid_argument;
using agtest::sample;
using agtest::Values;

ag::FunctionOptions unknown_dims(std::initializer_list<TensorSpec> specs) { return {.input_signature = specs}; }

TEST(JitRuntimeBroadcast, UnknownDimOfOneAgainstALargerDim) {
  const auto opts = unknown_dims({TensorSpec({-1, -1}, ag::float32), TensorSpec({-1, -1}, ag::float32)});
  auto chain = [](Tensor x, Tensor y) { return ag::tanh(x * y + 1.f) - y; };
  auto reduced = [](Tensor x, Tensor y) { return std::tuple{ag::reduce_sum(x * y, {1}), ag::reduce_max(x - y, {0}, true)}; };
  const std::vector<std::pair<ag::Shape, ag::Shape>> shapes = {
      {{3, 1}, {3, 4}}, {{1, 4}, {3, 4}}, {{3, 4}, {1, 1}}, {{1, 1}, {3, 4}}, {{1, 4}, {3, 1}},
      {{3, 4}, {3, 4}}, {{1, 1}, {1, 1}}, {{5, 1}, {1, 33}}, {{0, 1}, {1, 4}}, {{1, 0}, {3, 1}},
  };
  uint64_t seed = 1;
  for (const auto& [sx, sy] : shapes) {
    const Tensor x = sample(ag::float32, sx, seed++, Values::Moderate), y = sample(ag::float32, sy, seed++, Values::Moderate);
    const std::string what = sx.str() + " with " + sy.str();
    agtest::expect_three_way_with("chain " + what, chain, opts, {}, x, y);
    agtest::expect_three_way_with("reduced " + what, reduced, opts, {.rtol = 1e-4, .atol = 1e-4}, x, y);
  }
}

TEST(JitRuntimeBroadcast, UnknownDimAgainstStaticDimsAndOtherDtypes) {
  // [?] against a static [5]: ? is 1 or 5 at run time.
  auto add = [](Tensor x, Tensor y) { return x * 3 + y; };
  for (ag::DType d : {ag::int32, ag::int64, ag::float64}) {
    const auto opts = unknown_dims({TensorSpec({-1}, d), TensorSpec({5}, d)});
    const Values v = ag::is_floating(d) ? Values::Moderate : Values::Any;
    for (int64_t n : {1, 5})
      agtest::expect_three_way_with(fmt::format("{} [{}] + [5]", ag::dtype_name(d), n), add, opts, {}, sample(d, {n}, 40 + n, v),
                                    sample(d, {5}, 50, v));
  }
  // A rank-3 loop where only the middle unknown dim broadcasts: dims collapse around it.
  const auto opts = unknown_dims({TensorSpec({2, -1, 3}, ag::float32), TensorSpec({2, 4, 3}, ag::float32)});
  agtest::expect_three_way_with("[2,1,3] + [2,4,3]", add, opts, {}, sample(ag::float32, {2, 1, 3}, 60, Values::Moderate),
                                sample(ag::float32, {2, 4, 3}, 61, Values::Moderate));
}

TEST(JitEmptyTensors, LayoutOpsWithZeroSizedDims) {
  uint64_t seed = 100;
  auto t = [&](const ag::Shape& s) { return sample(ag::float32, s, seed++, Values::Moderate); };
  auto transpose = [](Tensor x) { return std::tuple{ag::transpose(x), ag::transpose(x * 2.f, {1, 0, 2})}; };
  for (const ag::Shape& s : {ag::Shape{0, 3, 2}, ag::Shape{2, 0, 3}, ag::Shape{2, 3, 0}})
    agtest::expect_three_way("transpose " + s.str(), transpose, {}, t(s));
  auto concat0 = [](Tensor a, Tensor b) { return ag::concat({a, b, a}, 0); };
  agtest::expect_three_way("concat [0,3] [2,3]", concat0, {}, t({0, 3}), t({2, 3}));
  agtest::expect_three_way("concat [0,3] [0,3]", concat0, {}, t({0, 3}), t({0, 3}));
  auto concat1 = [](Tensor a, Tensor b) { return ag::concat({a, b}, 1); };
  agtest::expect_three_way("concat axis 1 [2,0] [2,3]", concat1, {}, t({2, 0}), t({2, 3}));
  agtest::expect_three_way("concat axis 1 [0,2] [0,3]", concat1, {}, t({0, 2}), t({0, 3}));
  auto slices = [](Tensor x) { return std::tuple{ag::slice(x, {1, 0}, {0, 3}), ag::slice(x, {0, 2}, {4, 0}), ag::slice(x, {4, 0}, {0, 3})}; };
  agtest::expect_three_way("slice to empty", slices, {}, t({4, 3}));
  auto slice_empty = [](Tensor x) { return ag::slice(x, {0, 0}, {0, 0}); };
  agtest::expect_three_way("slice of empty", slice_empty, {}, t({0, 0}));
  auto gather = [](Tensor p, Tensor i) { return std::tuple{ag::gather(p, i), ag::gather(p, i, 1)}; };
  agtest::expect_three_way("gather no indices", gather, {}, t({3, 4}), ag::zeros({0}, ag::int32));
  auto gather_rows = [](Tensor p, Tensor i) { return ag::gather(p, i, 0); };
  agtest::expect_three_way("gather from [3,0]", gather_rows, {}, t({3, 0}), ag::constant({2, 0}));
  agtest::expect_three_way("gather [0,2] indices", gather_rows, {}, t({3, 4}), ag::zeros({0, 2}, ag::int32));
}

TEST(JitEmptyTensors, ZeroAtRunTimeThroughUnknownDims) {
  const auto opts = unknown_dims({TensorSpec({-1, -1}, ag::float32), TensorSpec({-1}, ag::int32)});
  auto fn = [](Tensor x, Tensor i) {
    const Tensor y = ag::transpose(x) * 2.f;
    return std::tuple{ag::concat({x, x + 1.f}, 0), y, ag::gather(x, i, 1), ag::reduce_sum(y, {1})};
  };
  uint64_t seed = 200;
  for (const auto& [s, idx] : std::vector<std::pair<ag::Shape, std::vector<int32_t>>>{
           {{0, 3}, {2, 0}}, {{2, 0}, {}}, {{0, 0}, {}}, {{2, 3}, {}}, {{2, 3}, {1, 1, 2}}}) {
    const Tensor i = idx.empty() ? ag::zeros({0}, ag::int32) : ag::constant(idx);
    agtest::expect_three_way_with("unknown dims " + s.str(), fn, opts, {}, sample(ag::float32, s, seed++, Values::Moderate), i);
  }
}

std::string here(int line) { return "runtime_shapes_test.cpp:" + std::to_string(line); }

TEST(JitRuntimeShapeErrors, ReshapeConcatSliceMatMulBroadcast) {
  const auto vec = unknown_dims({TensorSpec({-1}, ag::float32)});
  const auto two = unknown_dims({TensorSpec({-1, -1}, ag::float32), TensorSpec({-1, -1}, ag::float32)});

  int line = __LINE__ + 1;
  auto reshape = ag::function([](Tensor x) { return ag::reshape(x * 2.f, {2, 3}); }, vec);
  EXPECT_TRUE(agtest::same_tensor(ag::reshape(ag::range(0.f, 6.f, 1.f) * 2.f, {2, 3}), reshape(ag::range(0.f, 6.f, 1.f))));
  expect_invalid_argument(reshape, {"reshape", "5 elements", here(line)}, ag::range(0.f, 5.f, 1.f));

  line = __LINE__ + 1;
  auto concat = ag::function([](Tensor a, Tensor b) { return ag::concat({a, b}, 0); }, two);
  expect_invalid_argument(concat, {"concat", "3", "4", here(line)}, ag::zeros({2, 3}), ag::zeros({2, 4}));

  line = __LINE__ + 1;
  auto slice = ag::function([](Tensor x) { return ag::slice(x, {2}, {3}); }, vec);
  EXPECT_TRUE(agtest::same_tensor(ag::slice(ag::range(0.f, 5.f, 1.f), {2}, {3}), slice(ag::range(0.f, 5.f, 1.f))));
  expect_invalid_argument(slice, {"slice", "out of range", here(line)}, ag::range(0.f, 4.f, 1.f));

  line = __LINE__ + 1;
  auto matmul = ag::function([](Tensor a, Tensor b) { return ag::matmul(a, b); }, two);
  expect_invalid_argument(matmul, {"matmul", "inner dimensions", "3", "4", here(line)}, ag::ones({2, 3}), ag::ones({4, 5}));
  EXPECT_TRUE(agtest::same_tensor(ag::matmul(ag::ones({2, 3}), ag::ones({3, 5})), matmul(ag::ones({2, 3}), ag::ones({3, 5}))));

  line = __LINE__ + 1;
  auto add = ag::function([](Tensor a, Tensor b) { return ag::exp(a) + b; }, two);
  expect_invalid_argument(add, {"broadcast", here(line)}, ag::ones({2, 3}), ag::ones({3, 3}));

  // The interpreter raises the same error type for each.
  auto interp = ag::function([](Tensor a, Tensor b) { return ag::matmul(a, b); },
                             {.input_signature = two.input_signature, .jit_compile = false});
  EXPECT_THROW(interp(ag::ones({2, 3}), ag::ones({4, 5})), ag::InvalidArgumentError);
  // Each compiled function is still usable, and compiled once.
  EXPECT_EQ(reshape.stats().compiles + reshape.stats().disk_hits, 1);
  EXPECT_EQ(concat(ag::ones({1, 2}), ag::zeros({3, 2})).shape(), (ag::Shape{4, 2}));
}

}  // namespace
