// Sorting, scattering, segments and einsum staged: eager == interpreter == JIT, with shapes
// known only at run time, an index out of range raising InvalidArgumentError from compiled
// code, and their gradients under a tape inside a compiled Function.
#include "jit_test_util.h"
#include "test_data.h"
#include "../common/expect_error.h"

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

// A tensor whose dims are unknown while tracing: with one index per row the scatter needs no
// reshape (a reshape names at most one unknown dim), so one trace serves every shape; with two
// indices per row the dims after them must be known, and the error says so.
TEST(JitIndexOps, ScatterAndGatherNdOverATensorOfUnknownDims) {
  auto f = [](Tensor t, Tensor idx, Tensor upd) {
    return std::tuple{ag::tensor_scatter_nd_add(t, idx, upd), ag::tensor_scatter_nd_update(t, idx, upd), ag::gather_nd(t, idx)};
  };
  auto jit = ag::function(f, {.input_signature = {TensorSpec({-1, -1}, ag::float32), TensorSpec({-1, 1}, ag::int32),
                                                  TensorSpec({-1, -1}, ag::float32)}});
  for (auto [n, m, k] : {std::tuple{4, 3, 2}, {6, 5, 4}, {1, 7, 1}}) {
    std::vector<int32_t> idx(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) idx[static_cast<size_t>(i)] = n - 1 - i;
    const Tensor t = sample(ag::float32, {n, m}, static_cast<uint64_t>(n), Values::Moderate);
    const Tensor upd = sample(ag::float32, {k, m}, static_cast<uint64_t>(m), Values::Moderate);
    const Tensor ids = ag::constant(idx, {k, 1});
    agtest::expect_same(f(t, ids, upd), jit(t, ids, upd), {}, "n = " + std::to_string(n));
  }
  EXPECT_EQ(jit.stats().traces, 1);
  // The bound of the unknown first dim is read at run time.
  agtest::expect_invalid_argument(jit, {"ag::tensor_scatter_nd_add", "every index must be in [0, dim)", "sort_scatter_test.cpp:"},
                                  ag::ones({3, 2}, ag::float32), ag::constant(std::vector<int32_t>{3}, {1, 1}), ag::ones({1, 2}, ag::float32));

  // Under a tape inside the Function: the gradients of both operands.
  auto grads = [](Tensor t, Tensor idx, Tensor upd) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(t);
    tape.watch(upd);
    const Tensor loss = ag::reduce_sum(ag::square(ag::tensor_scatter_nd_add(t, idx, upd * upd)));
    return std::tuple{loss, tape.gradient(loss, t), tape.gradient(loss, upd)};
  };
  auto jit_grads = ag::function(grads, {.input_signature = {TensorSpec({-1, -1}, ag::float64), TensorSpec({-1, 1}, ag::int64),
                                                            TensorSpec({-1, -1}, ag::float64)}});
  const Tensor t5 = sample(ag::float64, {5, 3}, 8, Values::Moderate), upd3 = sample(ag::float64, {3, 3}, 9, Values::Moderate);
  const Tensor rows = ag::constant(std::vector<int64_t>{4, 0, 4}, {3, 1});
  agtest::expect_same(grads(t5, rows, upd3), jit_grads(t5, rows, upd3), {}, "gradients");

  // Two indices per row over [4, 3, ?]: the rows [12, ?] have one unknown dim.
  auto pairs = [](Tensor t, Tensor idx, Tensor upd) { return ag::tensor_scatter_nd_add(t, idx, upd); };
  auto jit_pairs = ag::function(pairs, {.input_signature = {TensorSpec({4, 3, -1}, ag::float64), TensorSpec({-1, 2}, ag::int64),
                                                            TensorSpec({-1, -1}, ag::float64)}});
  const Tensor cube = sample(ag::float64, {4, 3, 5}, 3, Values::Moderate), upd = sample(ag::float64, {2, 5}, 4, Values::Moderate);
  const Tensor at = ag::constant(std::vector<int64_t>{3, 2, 0, 1}, {2, 2});
  agtest::expect_same(pairs(cube, at, upd), jit_pairs(cube, at, upd), {}, "two indices per row");

  auto jit_unknown = ag::function(pairs, {.input_signature = {TensorSpec({4, 3, -1, -1}, ag::float64), TensorSpec({-1, 2}, ag::int64),
                                                              TensorSpec({-1, -1, -1}, ag::float64)}});
  agtest::expect_error<ag::ValueError>([&] { jit_unknown(ag::zeros({4, 3, 2, 2}, ag::float64), at, ag::ones({2, 2, 2}, ag::float64)); },
                                       {"ag::tensor_scatter_nd_add", "static sizes", "sort_scatter_test.cpp:"});
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
