// Sorting, scattering, segments and einsum staged: eager == interpreter == JIT, with shapes
// known only at run time, an index out of range raising InvalidArgumentError from compiled
// code, and their gradients under a tape inside a compiled Function.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::sample;
using agtest::Values;

auto index_outputs = [](Tensor x, Tensor ids) {
  const ag::TopK t = ag::top_k(x, 3);
  return std::tuple{ag::sort(x), ag::argsort(x, 0, ag::SortDirection::descending), t.values, t.indices,
                    ag::take_along_axis(x, ag::argsort(x, 1), 1),
                    ag::tensor_scatter_nd_update(x, ag::constant({{0, 1}, {3, 2}}), ag::constant(std::vector<float>{-5, 7})),
                    ag::tensor_scatter_nd_add(x, ag::constant(std::vector<int32_t>{2, 0, 2}, {3, 1}), x(ag::Slice{0, 3}) * 2),
                    ag::unsorted_segment_sum(x, ids, 3), ag::unsorted_segment_max(x * x, ids, 3),
                    ag::einsum("ij,kj->ik", {x, x}), ag::einsum("ij->j", {x})};
};

TEST(JitIndexOps, ThreeWay) {
  const Tensor x = sample(ag::float32, {4, 5}, 1, Values::Moderate);
  const Tensor ids = ag::constant(std::vector<int32_t>{2, -1, 0, 2});
  const ag::FunctionStats s = agtest::expect_three_way("index ops", index_outputs, {.rtol = 1e-5, .atol = 1e-6}, x, ids);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

TEST(JitIndexOps, UnknownDimsAndErrorsFromCompiledCode) {
  const ag::FunctionOptions opts{.input_signature = {TensorSpec({-1, 3}, ag::float64), TensorSpec({-1}, ag::int64)}};
  auto f = [](Tensor x, Tensor ids) {
    return std::tuple{ag::sort(x, 0), ag::unsorted_segment_sum(x, ids, 4), ag::einsum("ni,nj->ij", {x, x})};
  };
  auto jit = ag::function(f, opts);
  for (int64_t n : {1, 5, 8}) {
    const Tensor x = sample(ag::float64, {n, 3}, static_cast<uint64_t>(n), Values::Moderate);
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7) % 5 - 1;  // -1 .. 3
    agtest::expect_same(f(x, ag::constant(v)), jit(x, ag::constant(v)), {}, "n = " + std::to_string(n));
  }
  EXPECT_EQ(jit.stats().traces, 1);
  agtest::expect_invalid_argument(jit, {"ag::unsorted_segment_sum", "index 4 is out of range [0, 4)", "sort_scatter_test.cpp:"},
                                  ag::ones({2, 3}, ag::float64), ag::constant(std::vector<int64_t>{0, 4}));
}

TEST(JitIndexOps, GradientsUnderATapeInsideAFunction) {
  auto step = [](Tensor w, Tensor x) {
    ag::GradientTape tape;
    tape.watch(w);
    const Tensor h = ag::einsum("bi,ij->bj", {x, w});
    const Tensor top = ag::top_k(h, 2).values;
    const Tensor pooled = ag::unsorted_segment_max(h, ag::constant(std::vector<int32_t>{0, 1, 0}), 2);
    const Tensor scattered = ag::tensor_scatter_nd_add(ag::sort(h, 0), ag::constant({{1, 2}}), ag::reshape(ag::reduce_sum(top), {1}));
    const Tensor loss = ag::reduce_sum(ag::tanh(scattered)) + ag::reduce_sum(pooled * pooled);
    return std::tuple{loss, tape.gradient(loss, w)};
  };
  const Tensor w = sample(ag::float64, {4, 3}, 5, Values::Moderate), x = sample(ag::float64, {3, 4}, 6, Values::Moderate);
  const ag::FunctionStats s = agtest::expect_three_way("train step", step, {}, w, x);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

}  // namespace
