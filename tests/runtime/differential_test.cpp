// Differential test: every op run eagerly and through a traced graph on the interpreter must
// agree bit for bit (they share kernels; this checks tracing, the passes and the interpreter).
#include <cmath>
#include <cstring>
#include <functional>

#include "test_util.h"

namespace {

using ag::Tensor;

struct Case {
  std::string name;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  std::vector<Tensor> inputs;
};

bool identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const size_t bytes = static_cast<size_t>(a.num_elements()) * ag::dtype_size(a.dtype());
  if (std::memcmp(ag::detail::impl_of(a)->data, ag::detail::impl_of(b)->data, bytes) == 0) return true;
  if (!ag::is_floating(a.dtype())) return false;
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();  // NaNs compare equal here
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

Tensor traced(const Case& c) {
  switch (c.inputs.size()) {
    case 1: return ag::function([&](Tensor a) { return c.fn({a}); }, agtest::interpreted())(c.inputs[0]);
    case 2:
      return ag::function([&](Tensor a, Tensor b) { return c.fn({a, b}); }, agtest::interpreted())(c.inputs[0], c.inputs[1]);
    case 3:
      return ag::function([&](Tensor a, Tensor b, Tensor d) { return c.fn({a, b, d}); }, agtest::interpreted())(
          c.inputs[0], c.inputs[1], c.inputs[2]);
  }
  throw std::logic_error("arity");
}

std::vector<Case> cases() {
  const Tensor f = ag::random_normal({3, 4}, ag::float32, 0, 2, 1);
  const Tensor g = ag::random_normal({4}, ag::float32, 0, 2, 2);
  const Tensor d = ag::random_normal({2, 3}, ag::float64, 0, 2, 3);
  const Tensor i = ag::random_uniform({3, 4}, ag::int32, -20, 20, 4);
  const Tensor j = ag::random_uniform({4}, ag::int32, 1, 7, 5);
  const Tensor l = ag::random_uniform({2, 3}, ag::int64, -9, 9, 6);
  const Tensor b = i > 0;
  const Tensor pos = ag::abs(f) + 0.5f;
  std::vector<Case> cs;
  auto add = [&](std::string n, std::function<Tensor(const std::vector<Tensor>&)> fn, std::vector<Tensor> in) {
    cs.push_back({std::move(n), std::move(fn), std::move(in)});
  };
  using V = const std::vector<Tensor>&;
  for (const Tensor& x : {f, d, i, l}) {
    const std::string t(ag::dtype_name(x.dtype()));
    add("neg_" + t, [](V v) { return -v[0]; }, {x});
    add("abs_" + t, [](V v) { return ag::abs(v[0]); }, {x});
    add("square_" + t, [](V v) { return ag::square(v[0]); }, {x});
    add("relu_" + t, [](V v) { return ag::relu(v[0]); }, {x});
    add("sign_" + t, [](V v) { return ag::sign(v[0]); }, {x});
    add("add_sub_mul_" + t, [](V v) { return v[0] + v[0] * 3 - 2; }, {x});
    add("max_min_" + t, [](V v) { return ag::maximum(v[0], 1) + ag::minimum(v[0], -1); }, {x});
    add("compare_" + t, [](V v) { return ag::logical_and(v[0] < 3, v[0] >= -3) | (v[0] == 0); }, {x});
    add("reduce_" + t, [](V v) { return ag::reduce_sum(v[0], 1) + ag::reduce_max(v[0], 1, true)[0] * 0 + ag::reduce_min(v[0]); }, {x});
    add("reduce_prod_mean_" + t, [](V v) { return ag::reduce_prod(v[0] % 3 + 2, 0) + ag::reduce_mean(v[0], 1)[0]; }, {x});
    add("argmax_" + t, [](V v) { return ag::argmax(v[0], 1) + ag::argmin(v[0], 0)[0]; }, {x});
    add("transpose_reshape_" + t, [](V v) { return ag::reshape(ag::transpose(v[0]), {-1}); }, {x});
    add("slice_gather_" + t, [](V v) {
      return ag::concat({ag::slice(v[0], {0, 1}, {-1, 2}), ag::gather(v[0], ag::constant({1, 0}), 1)}, 1);
    }, {x});
    add("stack_expand_squeeze_" + t, [](V v) { return ag::squeeze(ag::expand_dims(ag::stack({v[0], v[0]}, 1), 0)); }, {x});
    add("cast_" + t, [](V v) { return ag::cast(ag::cast(v[0], ag::float32), ag::int32) + ag::cast(v[0] > 0, ag::int32); }, {x});
    add("where_" + t, [](V v) { return ag::where(v[0] > 0, v[0], v[0] * 2); }, {x});
    add("shape_of_" + t, [](V v) { return ag::shape_of(v[0]) * 2; }, {x});
  }
  for (const Tensor& x : {pos, d * d + 0.1}) {
    const std::string t(ag::dtype_name(x.dtype()));
    add("transcendental_" + t, [](V v) {
      return ag::exp(v[0]) + ag::log(v[0]) + ag::sqrt(v[0]) + ag::tanh(v[0]) + ag::sigmoid(v[0]) + ag::softplus(v[0]) + ag::sin(v[0]) +
             ag::cos(v[0]);
    }, {x});
    add("rounding_" + t, [](V v) { return ag::floor(v[0] * 3) + ag::ceil(v[0] * 3) + ag::round(v[0] * 2.5); }, {x});
    add("pow_div_" + t, [](V v) { return ag::pow(v[0], v[0]) / (v[0] + 1) + ag::floordiv(v[0], 0.3) + ag::floormod(v[0], 0.3); }, {x});
  }
  add("broadcast_row", [](V v) { return v[0] * v[1] + v[1]; }, {f, g});
  add("broadcast_column", [](V v) { return v[0] - ag::reshape(v[1], {3, 1}); }, {f, ag::constant({1.f, 2.f, 3.f})});
  add("int_division", [](V v) { return v[0] / v[1] + v[0] % v[1] + ag::floordiv(v[0], v[1]) + ag::floormod(v[0], v[1]); }, {i, j});
  add("int_pow", [](V v) { return ag::pow(v[0] % 5, v[1] % 4); }, {i, j});
  add("bool_logic", [](V v) { return ag::logical_xor(v[0], ~v[0]) & ag::reduce_any(v[0], 1, true); }, {b});
  add("matmul_2d", [](V v) { return ag::matmul(v[0], ag::transpose(v[0])); }, {f});
  add("matmul_batched", [](V v) { return ag::matmul(ag::stack({v[0], v[0] * 2}), ag::transpose(v[0])); }, {f});
  add("matmul_int", [](V v) { return ag::matmul(v[0], ag::transpose(v[0])); }, {i});
  add("range_fill", [](V v) { return ag::range(v[0]) + ag::fill({5}, v[0]) * 0 + ag::zeros_like(ag::range(v[0])); }, {Tensor(5)});
  add("empty", [](V v) { return ag::reduce_sum(v[0], 0) + ag::reduce_max(v[0] * 2, 0); }, {ag::zeros({0, 3})});
  add("scalars", [](V v) { return v[0] * v[1] - v[2]; }, {Tensor(2.f), Tensor(3.f), Tensor(4.f)});
  add("nan_propagation", [](V v) { return ag::maximum(v[0], 0.f) + ag::reduce_max(v[0]); },
      {ag::constant({1.f, NAN, -2.f})});
  add("logical_or_reduce_all", [](V v) {
    return ag::logical_or(v[0], ~v[0] & v[1]) | ag::reduce_all(v[0] | v[1], 0, true) | ag::reduce_all(v[1]);
  }, {b, i < 5});
  add("reduce_all_any_empty", [](V v) { return ag::reduce_all(v[0] > 0, 1) | ag::reduce_any(v[0] > 0, 1); },
      {ag::zeros({3, 0})});
  // Construction across dtypes: constants (eye, ones), Fill of a traced value, FillLike.
  for (ag::DType dt : {ag::float32, ag::float64, ag::int32, ag::int64, ag::bool_}) {
    const std::string t(ag::dtype_name(dt));
    add("eye_ones_fill_" + t, [dt](V v) {
      const Tensor x = ag::cast(v[0], dt);
      return ag::concat({ag::eye(3, dt), ag::ones({1, 3}, dt), ag::fill({2, 3}, x[0][0]), ag::ones_like(x),
                         ag::zeros_like(x)}, 0);
    }, {ag::constant({{0, 2, -3}, {4, 0, 6}})});
  }
  add("tensor_array_write_read_stack_size", [](V v) {
    ag::TensorArray ta(ag::float32);
    for (int k = 0; k < 3; ++k) ta = ta.write(k, v[0][k] * static_cast<float>(k + 1));
    return ag::concat({ag::reshape(ta.stack(), {-1}), ta.read(1), ag::reshape(ag::cast(ta.size(), ag::float32), {1})}, 0);
  }, {f});
  // Large inputs (past the pooled-allocator threshold) and empty ones.
  const Tensor big = ag::random_uniform({512, 1024}, ag::float32, -2, 2, 11);
  add("large_elementwise_reduce", [](V v) { return ag::reduce_sum(ag::tanh(v[0]) * v[0] + 1.f, 1); }, {big});
  add("large_int_broadcast", [](V v) { return v[0] * ag::range(1024) % 7; },
      {ag::random_uniform({300, 1024}, ag::int32, -100, 100, 12)});
  add("empty_everything", [](V v) {
    return ag::concat({ag::matmul(v[0], ag::transpose(v[0])), ag::zeros({0, 0})}, 0) + ag::reduce_prod(v[0]);
  }, {ag::zeros({0, 4})});
  return cs;
}

// The error `f` raises, as "<kind>: <message>" ("" when none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ag::InvalidArgumentError& e) {
    return std::string("InvalidArgumentError: ") + e.what();
  } catch (const ag::ValueError& e) {
    return std::string("ValueError: ") + e.what();
  } catch (const ag::TypeError& e) {
    return std::string("TypeError: ") + e.what();
  }
  return "";
}

TEST(Differential, ErrorsAgreeEagerAndInterpreter) {
  // Run-time data: integer division by zero, the same error through the interpreter.
  auto div = [](Tensor a, Tensor b) { return a / b + 1; };
  const Tensor a = ag::constant({4, 5}), zero = ag::constant({2, 0});
  const std::string eager = error_of([&] { div(a, zero); });
  ASSERT_NE(eager.find("InvalidArgumentError: "), std::string::npos) << eager;
  EXPECT_NE(eager.find("division by zero"), std::string::npos) << eager;
  auto f = ag::function(div, agtest::interpreted());
  EXPECT_EQ(error_of([&] { f(a, zero); }), eager);
  EXPECT_EQ(f(a, ag::constant({2, 5})).to_vector<int>(), (std::vector<int>{3, 2}));  // usable after the error
  auto floor_ops = [](Tensor x, Tensor y) { return ag::floormod(x, y) + ag::floordiv(x, y); };
  const std::string floor_eager = error_of([&] { floor_ops(a, zero); });
  EXPECT_NE(floor_eager.find("InvalidArgumentError: "), std::string::npos) << floor_eager;
  EXPECT_EQ(error_of([&] { ag::function(floor_ops, agtest::interpreted())(a, zero); }), floor_eager);

  // Broadcasting: static shapes fail while tracing with the eager ValueError ...
  auto add = [](Tensor x, Tensor y) { return x + y; };
  const Tensor p = ag::zeros({2, 3}), q = ag::zeros({3, 2});
  const std::string shape_error = error_of([&] { add(p, q); });
  ASSERT_NE(shape_error.find("ValueError: "), std::string::npos) << shape_error;
  auto g = ag::function(add, agtest::interpreted());
  EXPECT_EQ(error_of([&] { g(p, q); }), shape_error);
  // ... unknown dims fail at run time: the same message as an InvalidArgumentError (run-time data).
  auto dynamic = ag::function(add, {.input_signature = {ag::TensorSpec({-1, -1}, ag::float32),
                                                       ag::TensorSpec({-1, -1}, ag::float32)},
                                    .jit_compile = false});
  const std::string at_run_time = error_of([&] { dynamic(p, q); });
  EXPECT_EQ(at_run_time, "InvalidArgumentError: " + shape_error.substr(std::string("ValueError: ").size()));
  // Dtypes are static: a TypeError while tracing, as eagerly.
  const std::string type_error = error_of([&] { add(p, ag::zeros({2, 3}, ag::int32)); });
  ASSERT_NE(type_error.find("TypeError: "), std::string::npos);
  EXPECT_EQ(error_of([&] { g(p, ag::zeros({2, 3}, ag::int32)); }), type_error);
}

TEST(Differential, EagerEqualsInterpreter) {
  int checked = 0;
  for (const Case& c : cases()) {
    const Tensor eager = c.fn(c.inputs);
    const Tensor graph = traced(c);
    EXPECT_TRUE(identical(eager, graph)) << c.name << "\n eager: " << eager.str() << "\n graph: " << graph.str();
    ++checked;
  }
  EXPECT_GT(checked, 95);
}

}  // namespace
