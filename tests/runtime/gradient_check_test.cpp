// The gradient checker: every differentiable op's gradient, computed by a GradientTape, against
// central finite differences in float64 (as tf.test.compute_gradient and torch's gradcheck do),
// at several shapes, including broadcast, scalar and empty ones, with a random upstream gradient.
#include <gtest/gtest.h>

#include <ag/ag.h>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using ag::Tensor;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Values in [lo, hi] with a random sign when `signed_values` (kept away from 0 and from each
// other, so that relu, abs, maximum and reduce_max are differentiable at them).
Tensor sample(const ag::Shape& shape, uint32_t seed, double lo = 0.2, double hi = 1.5, bool signed_values = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = u(rng) + 1e-3 * static_cast<double>(i);
    if (signed_values && (rng() & 1)) v[i] = -v[i];
  }
  return ag::constant(v, shape);
}

// L(xs) = sum(f(xs) * w): a scalar whose gradient weights each output element by w.
double loss(const Fn& f, const std::vector<Tensor>& xs, const Tensor& w) {
  return ag::reduce_sum(f(xs) * w).item<double>();
}

// Checks the tape's d L / d xs[i] against central differences for every input.
// `eps`: the finite-difference step (larger where the function rounds to float32).
void check_gradient(const std::string& what, const Fn& f, const std::vector<Tensor>& xs, double tol = 1e-6,
                    double eps = 1e-6) {
  SCOPED_TRACE(what);
  const Tensor y = f(xs);
  const Tensor w = sample(y.shape(), 99, 0.5, 1.5, false);
  std::vector<Tensor> analytic;
  {
    ag::GradientTape tape;
    for (const Tensor& x : xs) tape.watch(x);
    const Tensor l = ag::reduce_sum(f(xs) * w);
    std::vector<ag::GradSource> sources(xs.begin(), xs.end());
    analytic = tape.gradient(l, sources, ag::UnconnectedGradients::zero);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_TRUE(analytic[i].has_value()) << "input " << i;
    ASSERT_EQ(analytic[i].shape(), xs[i].shape()) << "input " << i;
    ASSERT_EQ(analytic[i].dtype(), xs[i].dtype()) << "input " << i;
    const std::vector<double> got = analytic[i].to_vector<double>();
    std::vector<double> base = xs[i].to_vector<double>();
    for (size_t k = 0; k < base.size(); ++k) {
      std::vector<Tensor> plus = xs, minus = xs;
      std::vector<double> p = base, m = base;
      p[k] += eps;
      m[k] -= eps;
      plus[i] = ag::constant(p, xs[i].shape());
      minus[i] = ag::constant(m, xs[i].shape());
      const double numeric = (loss(f, plus, w) - loss(f, minus, w)) / (2 * eps);
      EXPECT_NEAR(got[k], numeric, tol * std::max(1.0, std::abs(numeric))) << "input " << i << " element " << k;
    }
  }
}

Fn unary(Tensor (*op)(const Tensor&, ag::Loc)) {
  return [op](const std::vector<Tensor>& x) { return op(x[0], ag::Loc::current()); };
}

TEST(GradientCheck, UnaryOps) {
  const std::vector<std::pair<const char*, Tensor (*)(const Tensor&, ag::Loc)>> any_sign = {
      {"neg", ag::neg},       {"abs", ag::abs},   {"square", ag::square},   {"relu", ag::relu},
      {"exp", ag::exp},       {"tanh", ag::tanh}, {"sigmoid", ag::sigmoid}, {"softplus", ag::softplus},
      {"sin", ag::sin},       {"cos", ag::cos},   {"erf", ag::erf},         {"identity", ag::identity},
      {"erfc", ag::erfc},     {"expm1", ag::expm1}, {"atan", ag::atan},     {"sinh", ag::sinh},
      {"cosh", ag::cosh},     {"asinh", ag::asinh}};
  for (const ag::Shape& shape : {ag::Shape{}, ag::Shape{5}, ag::Shape{2, 3}, ag::Shape{0, 3}})
    for (const auto& [name, op] : any_sign) check_gradient(std::string(name) + " " + shape.str(), unary(op), {sample(shape, 1)});
  for (const auto& [name, op] : std::vector<std::pair<const char*, Tensor (*)(const Tensor&, ag::Loc)>>{
           {"log", ag::log}, {"sqrt", ag::sqrt}})
    check_gradient(name, unary(op), {sample({2, 3}, 2, 0.2, 2.0, false)});
  // Inside each function's domain: (-1, 1) for asin, acos, atanh and tan's first branch, (1, inf)
  // for acosh, (0, inf) for rsqrt and log1p.
  for (const auto& [name, op] : std::vector<std::pair<const char*, Tensor (*)(const Tensor&, ag::Loc)>>{
           {"asin", ag::asin}, {"acos", ag::acos}, {"atanh", ag::atanh}, {"tan", ag::tan}})
    check_gradient(name, unary(op), {sample({2, 3}, 12, 0.1, 0.8)});
  check_gradient("acosh", unary(ag::acosh), {sample({2, 3}, 13, 1.2, 3.0, false)});
  for (const auto& [name, op] : std::vector<std::pair<const char*, Tensor (*)(const Tensor&, ag::Loc)>>{
           {"rsqrt", ag::rsqrt}, {"log1p", ag::log1p}})
    check_gradient(name, unary(op), {sample({2, 3}, 14, 0.2, 2.0, false)});
  check_gradient("cast to float64 and back", [](const std::vector<Tensor>& x) { return ag::cast(ag::cast(x[0], ag::float32), ag::float64); },
                 {sample({4}, 3)}, 1e-4, 1e-2);
}

TEST(GradientCheck, BinaryOpsWithBroadcasting) {
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"add", [](const std::vector<Tensor>& x) { return x[0] + x[1]; }},
      {"sub", [](const std::vector<Tensor>& x) { return x[0] - x[1]; }},
      {"mul", [](const std::vector<Tensor>& x) { return x[0] * x[1]; }},
      {"div", [](const std::vector<Tensor>& x) { return x[0] / x[1]; }},
      {"maximum", [](const std::vector<Tensor>& x) { return ag::maximum(x[0], x[1]); }},
      {"minimum", [](const std::vector<Tensor>& x) { return ag::minimum(x[0], x[1]); }},
      {"atan2", [](const std::vector<Tensor>& x) { return ag::atan2(x[0], x[1]); }},
  };
  const std::vector<std::pair<ag::Shape, ag::Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3, 1}, {4}}, {{}, {2, 3}}, {{2, 1, 3}, {4, 1}}, {{0, 3}, {3}}};
  for (const auto& [name, f] : ops)
    for (const auto& [a, b] : shapes)
      check_gradient(std::string(name) + " " + a.str() + " " + b.str(), f, {sample(a, 4), sample(b, 5)});
  check_gradient("pow", [](const std::vector<Tensor>& x) { return ag::pow(x[0], x[1]); },
                 {sample({2, 3}, 6, 0.5, 2.0, false), sample({3}, 7)});
  check_gradient("where", [](const std::vector<Tensor>& x) { return ag::where(x[0] > 0, x[0] * 3, x[1]); },
                 {sample({2, 3}, 8), sample({3}, 9)});
}

TEST(GradientCheck, ReductionsAndMatmul) {
  for (bool keep : {false, true}) {
    const std::string k = keep ? " keepdims" : "";
    check_gradient("sum all" + k, [&](const std::vector<Tensor>& x) { return ag::reduce_sum(x[0], {}, keep); }, {sample({2, 3}, 10)});
    check_gradient("sum axis 1" + k, [&](const std::vector<Tensor>& x) { return ag::reduce_sum(x[0], 1, keep); }, {sample({2, 3, 2}, 11)});
    check_gradient("mean axes 0,2" + k, [&](const std::vector<Tensor>& x) { return ag::reduce_mean(x[0], {0, 2}, keep); },
                   {sample({2, 3, 2}, 12)});
    check_gradient("max axis 0" + k, [&](const std::vector<Tensor>& x) { return ag::reduce_max(x[0], 0, keep); }, {sample({3, 4}, 13)});
    check_gradient("min all" + k, [&](const std::vector<Tensor>& x) { return ag::reduce_min(x[0], {}, keep); }, {sample({3, 4}, 14)});
  }
  check_gradient("prod axis 1", [](const std::vector<Tensor>& x) { return ag::reduce_prod(x[0], 1); }, {sample({2, 3}, 32)});
  // With zeros: one in a row (the product of the others there), two in a row (all zero).
  check_gradient("prod with zeros", [](const std::vector<Tensor>& x) { return ag::reduce_prod(x[0] * x[1], 1); },
                 {sample({3, 3}, 33), ag::constant({{1.0, 0.0, 2.0}, {0.0, 1.0, 0.0}, {1.5, 1.0, 0.5}})});
  check_gradient("sum of empty", [](const std::vector<Tensor>& x) { return ag::reduce_sum(x[0], 0); }, {sample({0, 3}, 15)});
  check_gradient("matmul", [](const std::vector<Tensor>& x) { return ag::matmul(x[0], x[1]); }, {sample({3, 4}, 16), sample({4, 2}, 17)});
  check_gradient("batched matmul, broadcast batch", [](const std::vector<Tensor>& x) { return ag::matmul(x[0], x[1]); },
                 {sample({2, 3, 4}, 18), sample({4, 2}, 19)});
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const std::string name = std::string("matmul") + (ta ? " transpose_a" : "") + (tb ? " transpose_b" : "");
      check_gradient(name, [&](const std::vector<Tensor>& x) { return ag::matmul(x[0], x[1], ta, tb); },
                     {sample(ta ? ag::Shape{2, 4, 3} : ag::Shape{2, 3, 4}, 34), sample(tb ? ag::Shape{2, 4} : ag::Shape{4, 2}, 35)});
      // Second order, and one tensor as both operands.
      check_gradient(name + " of itself, second order", [&](const std::vector<Tensor>& x) {
        ag::GradientTape inner;
        inner.watch(x[0]);
        const Tensor y = ag::reduce_sum(ag::tanh(ag::matmul(x[0], x[0], ta, tb)));
        return inner.gradient(y, x[0]);
      }, {sample({3, 3}, 36)});
    }
}

TEST(GradientCheck, LayoutOps) {
  check_gradient("transpose", [](const std::vector<Tensor>& x) { return ag::transpose(x[0], {2, 0, 1}); }, {sample({2, 3, 4}, 20)});
  check_gradient("reshape", [](const std::vector<Tensor>& x) { return ag::reshape(x[0], {3, -1}); }, {sample({2, 3}, 21)});
  check_gradient("expand_dims", [](const std::vector<Tensor>& x) { return ag::expand_dims(x[0], -1) * x[0]; }, {sample({3}, 22)});
  check_gradient("squeeze", [](const std::vector<Tensor>& x) { return ag::squeeze(x[0]); }, {sample({1, 3, 1}, 23)});
  check_gradient("concat", [](const std::vector<Tensor>& x) { return ag::concat({x[0], x[1], x[0]}, 1); },
                 {sample({2, 3}, 24), sample({2, 1}, 25)});
  check_gradient("stack", [](const std::vector<Tensor>& x) { return ag::stack({x[0], x[1]}, 1); }, {sample({3}, 26), sample({3}, 27)});
  check_gradient("slice", [](const std::vector<Tensor>& x) { return ag::slice(x[0], {1, 0}, {2, -1}); }, {sample({4, 3}, 28)});
  check_gradient("gather, repeated indices",
                 [](const std::vector<Tensor>& x) { return ag::gather(x[0], ag::constant({2, 0, 2, 3})); }, {sample({4, 2}, 29)});
  check_gradient("gather along axis 1, 2-D indices",
                 [](const std::vector<Tensor>& x) { return ag::gather(x[0], ag::constant({{2, 0}, {2, 1}}), 1); },
                 {sample({2, 3, 2}, 31)});
  check_gradient("x[i]", [](const std::vector<Tensor>& x) { return x[0][1] * x[0][2]; }, {sample({3, 2}, 30)});
}

}  // namespace

namespace {

// The functions written in ops (ag::nn, reduce_logsumexp, clip_by_value, broadcast_to): their
// gradients are their parts', checked as a whole.
TEST(GradientCheck, NnFunctions) {
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"softmax", [](const std::vector<Tensor>& x) { return ag::nn::softmax(x[0]); }},
      {"softmax axis 0", [](const std::vector<Tensor>& x) { return ag::nn::softmax(x[0], 0); }},
      {"log_softmax", [](const std::vector<Tensor>& x) { return ag::nn::log_softmax(x[0]); }},
      {"reduce_logsumexp", [](const std::vector<Tensor>& x) { return ag::reduce_logsumexp(x[0], 1); }},
      {"gelu", [](const std::vector<Tensor>& x) { return ag::nn::gelu(x[0]); }},
      {"gelu tanh", [](const std::vector<Tensor>& x) { return ag::nn::gelu(x[0], true); }},
      {"moments", [](const std::vector<Tensor>& x) {
         auto [m, v] = ag::nn::moments(x[0], {0});
         return m * 2 + v;
       }},
      {"l2_normalize", [](const std::vector<Tensor>& x) { return ag::nn::l2_normalize(x[0], 1); }},
      {"bias_add", [](const std::vector<Tensor>& x) { return ag::nn::bias_add(x[0], ag::reduce_sum(x[0], 0)); }},
      {"broadcast_to", [](const std::vector<Tensor>& x) { return ag::broadcast_to(ag::reduce_sum(x[0], 0), {4, 2, 3}); }},
      {"clip_by_value", [](const std::vector<Tensor>& x) { return ag::clip_by_value(x[0], -1.0, 0.9); }},
      {"pad constant", [](const std::vector<Tensor>& x) { return ag::pad(x[0], {{1, 2}, {0, 1}}, ag::PadMode::constant, 3); }},
      {"pad reflect", [](const std::vector<Tensor>& x) { return ag::pad(x[0], {{1, 1}, {2, 1}}, ag::PadMode::reflect); }},
      {"pad symmetric", [](const std::vector<Tensor>& x) { return ag::pad(x[0], {{2, 0}, {1, 3}}, ag::PadMode::symmetric); }},
      {"tile", [](const std::vector<Tensor>& x) { return ag::tile(x[0], {3, 2}); }},
      {"roll", [](const std::vector<Tensor>& x) { return ag::roll(x[0], {2, -1}, {0, 1}) * x[0]; }},
      {"gather_nd", [](const std::vector<Tensor>& x) {
         return ag::gather_nd(x[0], ag::constant(std::vector<int32_t>{1, 2, 0, 0, 1, 2, 1, 2}, {4, 2}));
       }},
      {"norm", [](const std::vector<Tensor>& x) { return ag::norm(x[0], 2, 1); }},
      {"norm 1", [](const std::vector<Tensor>& x) { return ag::norm(x[0], 1); }},
      {"meshgrid", [](const std::vector<Tensor>& x) {
         const std::vector<Tensor> g = ag::meshgrid({x[0](0), x[0](1, ag::Slice{0, 2})});
         return g[0] * g[1];
       }},
      {"cumsum", [](const std::vector<Tensor>& x) { return ag::cumsum(x[0], 1, true, true); }},
      {"softmax cross entropy",
       [](const std::vector<Tensor>& x) { return ag::nn::softmax_cross_entropy_with_logits(ag::nn::softmax(x[0] * 3), x[0]); }},
      {"sparse softmax cross entropy",
       [](const std::vector<Tensor>& x) {
         return ag::nn::sparse_softmax_cross_entropy_with_logits(ag::constant(std::vector<int32_t>{2, 0}), x[0]);
       }},
      {"sigmoid cross entropy",
       [](const std::vector<Tensor>& x) { return ag::nn::sigmoid_cross_entropy_with_logits(ag::sigmoid(x[0]), x[0] * 4); }},
  };
  for (const auto& [name, f] : ops) check_gradient(name, f, {sample({2, 3}, 21)});
}


// Convolutions (every padding, stride and dilation kind) and pooling, in float64 (agc's loops:
// the finite differences need float64; the float32 path is the same rule on oneDNN, checked
// against this one in the JIT's tests). conv2d is bilinear: its second derivatives are
// convolutions too, checked by differentiating a gradient.
TEST(GradientCheck, WindowOps) {
  using ag::nn::conv2d;
  const std::vector<std::tuple<const char*, ag::nn::Size2D, ag::nn::Size2D>> geometries = {
      {"VALID", 1, 1}, {"SAME", 1, 1}, {"SAME", 2, 1}, {"VALID", {2, 3}, 1}, {"SAME", 1, 2}, {"VALID", 1, {2, 1}}};
  for (const auto& [padding, strides, dilations] : geometries) {
    const std::string g = fmt::format("{} strides {}x{} dilations {}x{}", padding, strides.h, strides.w, dilations.h, dilations.w);
    const char* p = padding;
    const ag::nn::Size2D s = strides, d = dilations;
    check_gradient("conv2d " + g, [=](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], s, p, d); },
                   {sample({2, 6, 7, 2}, 40), sample({3, 2, 2, 3}, 41)});
    check_gradient("conv2d_transpose " + g,
                   [=](const std::vector<Tensor>& x) {
                     const ag::Shape out{2, 6, 7, 3};
                     return ag::nn::conv2d_transpose(x[0], x[1], out, s, p, d);
                   },
                   {sample(conv2d(ag::zeros({2, 6, 7, 3}, ag::float64), ag::zeros({3, 2, 3, 2}, ag::float64), s, p, d).shape(), 42),
                    sample({3, 2, 3, 2}, 43)});
    // Second order: d/d(x, w) of sum(dL/dx * u) + sum(dL/dw * v), the gradients of a tape.
    check_gradient("conv2d second order " + g,
                   [=](const std::vector<Tensor>& x) {
                     ag::GradientTape tape;
                     tape.watch(x[0]);
                     tape.watch(x[1]);
                     const Tensor y = conv2d(x[0], x[1], s, p, d);
                     const Tensor l = ag::reduce_sum(y * y);
                     const std::vector<Tensor> gr = tape.gradient(l, std::vector<ag::GradSource>{x[0], x[1]});
                     return ag::reduce_sum(gr[0] * gr[0]) + ag::reduce_sum(ag::tanh(gr[1]));
                   },
                   {sample({1, 5, 5, 2}, 44), sample({2, 2, 2, 2}, 45)}, 1e-5);
  }
  check_gradient("conv1d", [](const std::vector<Tensor>& x) { return ag::nn::conv1d(x[0], x[1], 2, "SAME"); },
                 {sample({2, 7, 3}, 46), sample({3, 3, 2}, 47)});
  // One tensor as both operands.
  check_gradient("conv2d(x, x)", [](const std::vector<Tensor>& x) { return conv2d(x[0], x[0], 1, "SAME"); },
                 {sample({2, 2, 2, 2}, 48)});
  for (const char* padding : {"VALID", "SAME"}) {
    const char* p = padding;
    check_gradient(std::string("max_pool2d ") + p, [=](const std::vector<Tensor>& x) { return ag::nn::max_pool2d(x[0], {3, 2}, {2, 1}, p); },
                   {sample({2, 5, 6, 3}, 49)});
    check_gradient(std::string("avg_pool2d ") + p, [=](const std::vector<Tensor>& x) { return ag::nn::avg_pool2d(x[0], 3, 2, p); },
                   {sample({2, 5, 6, 3}, 50)});
    check_gradient(std::string("avg_pool2d second order ") + p,
                   [=](const std::vector<Tensor>& x) {
                     ag::GradientTape tape;
                     tape.watch(x[0]);
                     const Tensor y = ag::nn::avg_pool2d(x[0] * x[0], 2, 2, p);
                     return tape.gradient(ag::reduce_sum(ag::sin(y)), x[0]);
                   },
                   {sample({1, 4, 5, 2}, 51)}, 1e-5);
    // max_pool2d's gradient differentiated (MaxPoolGradGrad), overlapping windows.
    check_gradient(std::string("max_pool2d second order ") + p,
                   [=](const std::vector<Tensor>& x) {
                     ag::GradientTape tape;
                     tape.watch(x[0]);
                     const Tensor y = ag::nn::max_pool2d(x[0] * x[0], 3, 2, p);
                     return tape.gradient(ag::reduce_sum(ag::sin(y)), x[0]);
                   },
                   {sample({1, 5, 6, 2}, 52)}, 1e-5);
  }
}


// Sorting, scattering, segments and einsum: sort and top_k follow their indices (distinct
// values, so the order does not move under the finite differences); the scatters' rows.
TEST(GradientCheck, IndexOps) {
  check_gradient("sort", [](const std::vector<Tensor>& x) { return ag::sort(x[0], 0); }, {sample({4, 3}, 60)});
  check_gradient("sort descending",
                 [](const std::vector<Tensor>& x) { return ag::sort(x[0], -1, ag::SortDirection::descending); }, {sample({3, 4}, 61)});
  check_gradient("top_k", [](const std::vector<Tensor>& x) { return ag::top_k(x[0], 2).values; }, {sample({3, 5}, 62)});
  check_gradient("take_along_axis", [](const std::vector<Tensor>& x) {
    return ag::take_along_axis(x[0], ag::constant({{2, 0, 2}, {1, 1, 0}}), 1);
  }, {sample({2, 3}, 63)});
  const Tensor idx = ag::constant({{0, 1}, {2, 0}, {0, 1}});
  check_gradient("tensor_scatter_nd_update", [&](const std::vector<Tensor>& x) {
    return ag::tensor_scatter_nd_update(x[0], ag::constant({{0, 1}, {2, 0}}), x[1]);
  }, {sample({3, 2}, 64), sample({2}, 65)});
  check_gradient("tensor_scatter_nd_add, repeated index",
                 [&](const std::vector<Tensor>& x) { return ag::tensor_scatter_nd_add(x[0], idx, x[1]); },
                 {sample({3, 2}, 66), sample({3}, 67)});
  check_gradient("unsorted_segment_sum", [](const std::vector<Tensor>& x) {
    return ag::unsorted_segment_sum(x[0], ag::constant(std::vector<int32_t>{1, -1, 1, 0}), 3);
  }, {sample({4, 2}, 68)});
  check_gradient("unsorted_segment_max", [](const std::vector<Tensor>& x) {
    return ag::unsorted_segment_max(x[0], ag::constant(std::vector<int32_t>{1, 0, 1, -1, 1}), 2);
  }, {sample({5, 3}, 69)});
  check_gradient("einsum attention", [](const std::vector<Tensor>& x) { return ag::einsum("bqd,bkd->bqk", {x[0], x[1]}); },
                 {sample({2, 3, 4}, 70), sample({2, 2, 4}, 71)});
  check_gradient("einsum three operands", [](const std::vector<Tensor>& x) { return ag::einsum("ij,jk,k->i", {x[0], x[1], x[2]}); },
                 {sample({2, 3}, 72), sample({3, 4}, 73), sample({4}, 74)});
  check_gradient("einsum diagonal and trace", [](const std::vector<Tensor>& x) {
    return ag::einsum("bii->bi", {x[0]}) + ag::reshape(ag::einsum("ii", {x[1]}), {1, 1});
  }, {sample({2, 3, 3}, 69), sample({3, 3}, 70)});
}

}  // namespace
