// Results that alias inputs, constants and each other; dynamically shaped results that are views;
// side effects inside staged loops (print and variables run once per iteration, in order).
#include <mutex>

#include "jit_test_util.h"
#include "test_data.h"

namespace {

TEST(JitResults, AliasesOfInputsConstantsAndEachOther) {
  auto fn = [](ag::Tensor x) {
    const ag::Tensor y = ag::exp(x);
    return std::tuple{x, ag::reshape(x, {-1}), y, y, ag::reshape(y, {3, 2}), ag::constant({1, 2, 3}), ag::expand_dims(ag::constant({1.5f}), 0)};
  };
  const ag::Tensor x = agtest::sample(ag::float32, {2, 3}, 1, agtest::Values::Moderate);
  agtest::expect_three_way("aliases", fn, {}, x);
  auto f = ag::function(fn);
  auto [a, b, c, d, e, k, m] = f(x);
  EXPECT_EQ(a.data<float>(), x.data<float>());  // a parameter returned as is is not copied
  EXPECT_NE(c.data<float>(), d.data<float>());  // two results never share a buffer
}

TEST(JitResults, DynamicShapesAndViewsOfComputedValues) {
  auto fn = [](ag::Tensor x, ag::Tensor n) {
    const ag::Tensor r = ag::range(n) * 2;
    return std::tuple{ag::reshape(ag::cast(r, ag::float32), {-1, 1}) + x, ag::expand_dims(r, 0), ag::reduce_sum(r), ag::relu(x - 1.0f)};
  };
  const ag::FunctionOptions spec{.input_signature = {ag::TensorSpec({-1}, ag::float32), ag::TensorSpec({}, ag::int32)}};
  auto jit = ag::function(fn, spec);
  for (int n : {0, 1, 6}) {
    const ag::Tensor x = agtest::sample(ag::float32, {n + 2}, static_cast<uint64_t>(n), agtest::Values::Moderate);
    agtest::expect_same(fn(x, ag::Tensor(n)), jit(x, ag::Tensor(n)), {}, "dynamic n=" + std::to_string(n));
  }
  EXPECT_EQ(jit.tracing_count(), 1);
}

ag::Tensor loop_with_effects(ag::Tensor n, ag::Variable& v) {
  ag::Tensor i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   v.assign_add(ag::cast(i, ag::float32) * ag::ones({2}));
                   ag::print("step", i, v.value());
                   i += 1;
                 },
                 ag::state(i), {"i"}, AG_SOURCE_LOC("effects.cpp", 1));
  return v.value() * 2.0f;
}

TEST(JitEffects, PrintAndVariablesInsideALoop) {
  auto run = [](bool jit) {
    std::string text;
    std::mutex mu;
    ag::set_print_sink([&](std::string_view s) {
      std::lock_guard lock(mu);
      text += s;
    });
    ag::Variable v(ag::zeros({2}), "v");
    auto f = ag::function(loop_with_effects, {.jit_compile = jit});
    ag::Tensor r1 = f(ag::Tensor(3), v);
    ag::Tensor r2 = f(ag::Tensor(2), v);
    ag::set_print_sink(nullptr);
    return std::tuple{text, r1, r2, v.value()};
  };
  const auto [interp_text, i1, i2, iv] = run(false);
  const auto [jit_text, j1, j2, jv] = run(true);
  EXPECT_EQ(jit_text, interp_text);
  EXPECT_NE(jit_text.find("step 2 [3 3]"), std::string::npos) << jit_text;
  EXPECT_TRUE(agtest::same_tensor(i1, j1));
  EXPECT_TRUE(agtest::same_tensor(i2, j2));
  EXPECT_TRUE(agtest::same_tensor(iv, jv));
}

}  // namespace
