// assign_add and assign_sub of a computed operand update the variable in place (fusion.h,
// updates_in_place): the operand's elementwise producers run in the assignment's own loop over
// the variable's buffer, under its lock, with no temporary and no second pass. Checked: the plan
// (the operand fused into the assignment's group) and the IR (the lock helpers, no
// agc_rt_var_assign); values eager == interpreter == JIT over dtypes, broadcast operands, small
// and large (split over the pool) variables, a staged loop, a tape outside the trace, a nested
// Function; an eager reader keeps its value
// (copy-on-write); two threads' updates are whole; an operand that may raise is not fused (its
// error comes before the lock), and the variable stays usable after it.
#include <thread>

#include "jit_test_util.h"

namespace {

using ag::Tensor;
using agtest::ir_calls;
using agtest::plan_line;

// "group=%7" in a plan line, or "".
std::string group_of(const std::string& line) {
  const size_t at = line.find("group=");
  if (at == std::string::npos) return {};
  const size_t end = line.find_first_of(",]", at);
  return line.substr(at + 6, end - at - 6);
}

// An optimizer-like step: a moment updated by assign, the weight by assign_sub of an expression
// of it (a division and a square root: Adam's shape), and a bias by assign_add of a broadcast.
std::tuple<Tensor, Tensor> step(ag::Variable& w, ag::Variable& m, ag::Variable& b, Tensor g, Tensor row) {
  m.assign(m * 0.9f + g * 0.1f);
  w.assign_sub(m.value() * 0.01f / (ag::sqrt(ag::abs(m.value())) + 1e-3f));
  b.assign_add(row * 0.5f - 0.25f);
  return {ag::reduce_sum(w.value()), ag::reduce_sum(b.value())};
}

struct Case {
  std::vector<int64_t> shape;
};

class UpdateInPlace : public ::testing::TestWithParam<Case> {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
};

TEST_P(UpdateInPlace, AnOptimizerStepUpdatesEachVariableInItsOwnLoop) {
  const ag::Shape shape(GetParam().shape);
  const int64_t cols = shape[shape.rank() - 1];
  const Tensor g = ag::random_uniform(shape, ag::float32, -1, 1, 1);
  const Tensor row = ag::random_uniform({cols}, ag::float32, -1, 1, 2);
  std::vector<Tensor> results[3];
  for (int mode = 0; mode < 3; ++mode) {
    ag::Variable w(ag::random_uniform(shape, ag::float32, -1, 1, 3), "w"), m(ag::zeros(shape), "m"),
        b(ag::random_uniform(shape, ag::float32, -1, 1, 4), "b");
    auto call = [&](Tensor x, Tensor r) { return step(w, m, b, x, r); };
    auto f = ag::function(call, {.jit_compile = mode == 2});
    for (int k = 0; k < 3; ++k) {
      const auto [ws, bs] = mode == 0 ? call(g, row) : f(g, row);
      results[mode].push_back(ws);
      results[mode].push_back(bs);
    }
    results[mode].push_back(w.value());
    results[mode].push_back(b.value());
    results[mode].push_back(m.value());
    if (mode == 2) {
      const std::string ir = f.get_concrete_function(g, row).llvm_ir(false);
      EXPECT_TRUE(ir_calls(ir, "agc_rt_var_update_begin")) << ir;
      EXPECT_TRUE(ir_calls(ir, "agc_rt_var_update_end")) << ir;
      EXPECT_EQ(ir.find("call i32 @agc_rt_var_assign("), std::string::npos) << "an update took the helper's second pass";
      const std::string plan = agtest::fused_plan(call, {}, g, row);
      for (const char* op : {"AssignSubVariable", "AssignAddVariable"}) {
        const std::string line = plan_line(plan, op);
        ASSERT_FALSE(line.empty()) << plan;
        EXPECT_EQ(group_of(line), line.substr(line.find('%'), line.find(' ', line.find('%')) - line.find('%'))) << plan;
      }
      EXPECT_EQ(group_of(plan_line(plan, "Sqrt")), group_of(plan_line(plan, "AssignSubVariable"))) << plan;
    }
  }
  for (int mode = 1; mode < 3; ++mode)
    for (size_t k = 0; k < results[0].size(); ++k)
      EXPECT_TRUE(agtest::same_tensor(results[0][k], results[mode][k], {.rtol = 1e-5, .atol = 1e-5}))
          << "mode " << mode << " result " << k;
}

// 16 elements (the smallest updated in place), a row block below the pool's grain, and one large
// enough to split over the pool.
INSTANTIATE_TEST_SUITE_P(Sizes, UpdateInPlace,
                         ::testing::Values(Case{{4, 4}}, Case{{8, 96}}, Case{{512, 1024}}),
                         [](const auto& info) { return "n" + std::to_string(info.index); });

// Every dtype updated in place, add and sub, the new value used after; exact against eager.
TEST(UpdateInPlaceDtypes, IntegersWrapAndFloatsMatchEager) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  for (const ag::DType d : {ag::float32, ag::float64, ag::int32, ag::int64}) {
    const Tensor start = ag::cast(ag::random_uniform({3, 40}, ag::float32, -100, 100, 5), d);
    const Tensor x = ag::cast(ag::random_uniform({40}, ag::float32, -100, 100, 6), d);
    auto body = [](ag::Variable& v, Tensor t) {
      const Tensor after_add = v.assign_add(t * t + t);
      v.assign_sub(t * 3);
      return after_add + v.value();
    };
    std::vector<Tensor> results[3];
    for (int mode = 0; mode < 3; ++mode) {
      ag::Variable v(start, "v");
      if (d == ag::int32) v.assign(start + ag::constant(int32_t{2147483600}) * ag::cast(start > 0, ag::int32));  // near the top: wraps
      auto call = [&](Tensor t) { return body(v, t); };
      auto f = ag::function(call, {.jit_compile = mode == 2});
      for (int k = 0; k < 2; ++k) results[mode].push_back(mode == 0 ? call(x) : f(x));
      results[mode].push_back(v.value());
      if (mode == 2) EXPECT_TRUE(ir_calls(f.get_concrete_function(x).llvm_ir(false), "agc_rt_var_update_begin")) << ag::dtype_name(d);
    }
    for (int mode = 1; mode < 3; ++mode)
      for (size_t k = 0; k < results[0].size(); ++k)
        EXPECT_TRUE(agtest::same_tensor(results[0][k], results[mode][k], {0, 0})) << ag::dtype_name(d) << " mode " << mode << " result " << k;
  }
}

// In a staged loop, and with an eager reader holding the value (copied first, as eagerly).
TEST(UpdateInPlaceCompositions, InAStagedLoopAndWithAnEagerReader) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  const Tensor g = ag::random_uniform({64, 32}, ag::float32, -1, 1, 7);
  auto run = [&](int mode) {
    ag::Variable w(ag::random_uniform({64, 32}, ag::float32, -1, 1, 8), "w");
    auto loop = [&](Tensor x, Tensor n) {
      Tensor i = 0;
      ag::while_stmt([&] { return i < n; },
                     [&] {
                       w.assign_sub(ag::tanh(x * w.value()) * 0.1f);
                       i += 1;
                     },
                     ag::state(i), {"i"}, AG_SOURCE_LOC("update_in_place_test.cpp", 0));
      return w.value();
    };
    auto f = ag::function(loop, {.jit_compile = mode == 2});
    std::vector<Tensor> out;
    out.push_back(mode == 0 ? loop(g, ag::constant(5)) : f(g, ag::constant(5)));
    const Tensor held = w.value();  // an eager reader: the next update copies first
    const std::vector<float> held_values = held.to_vector<float>();
    out.push_back(mode == 0 ? loop(g, ag::constant(3)) : f(g, ag::constant(3)));
    EXPECT_EQ(held.to_vector<float>(), held_values) << "mode " << mode << ": the reader's value changed";
    out.push_back(held);
    out.push_back(w.value());
    return out;
  };
  const auto eager = run(0);
  agtest::expect_same(eager, run(1), {.rtol = 1e-5, .atol = 1e-6}, "interpreter");
  agtest::expect_same(eager, run(2), {.rtol = 1e-5, .atol = 1e-6}, "jit");
}

// A Function that updates in place, called under a tape outside its trace and nested in another
// Function: the loss's gradient and the variable agree with eager and the interpreter.
TEST(UpdateInPlaceCompositions, UnderATapeOutsideTheTraceAndNested) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  const Tensor x = ag::random_uniform({8, 64}, ag::float32, -1, 1, 9);
  auto run = [&](int mode) {
    ag::Variable w(ag::random_uniform({8, 64}, ag::float32, -1, 1, 10), "w");
    auto body = [&](Tensor in) {
      w.assign_sub(ag::exp(in) * 0.1f);
      return ag::reduce_sum(ag::square(w.value() * in));
    };
    auto inner = ag::function(body, {.jit_compile = mode == 2});
    auto outer = ag::function([&](Tensor in) { return inner(in) * 2.f; }, {.jit_compile = mode == 2});
    std::vector<Tensor> out;
    {
      ag::GradientTape tape;
      tape.watch(x);
      const Tensor loss = mode == 0 ? body(x) : inner(x);
      out.push_back(loss);
      out.push_back(tape.gradient(loss, x));
    }
    out.push_back(mode == 0 ? body(x) * 2.f : outer(x));
    out.push_back(w.value());
    if (mode == 2) EXPECT_TRUE(ir_calls(inner.get_concrete_function(x).llvm_ir(false), "agc_rt_var_update_begin"));
    return out;
  };
  const auto eager = run(0);
  agtest::expect_same(eager, run(1), {.rtol = 1e-5, .atol = 1e-5}, "interpreter");
  agtest::expect_same(eager, run(2), {.rtol = 1e-5, .atol = 1e-5}, "jit");
}

// Two threads adding to one variable in place: every update whole (the loop runs under the lock).
TEST(UpdateInPlaceCompositions, TwoThreadsUpdatesAreWhole) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  ag::Variable total(ag::zeros({4096}, ag::int64), "total");
  auto f = ag::function([&](Tensor x) { return total.assign_add(x * 2 - 1); });
  const Tensor one = ag::ones({4096}, ag::int64);
  ASSERT_TRUE(ir_calls(f.get_concrete_function(one).llvm_ir(false), "agc_rt_var_update_begin"));
  auto work = [&] {
    for (int k = 0; k < 500; ++k) f(one);
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  const std::vector<int64_t> got = total.value().to_vector<int64_t>();
  for (int64_t v : got) ASSERT_EQ(v, 1000);
}

// An operand that may raise (integer division) is computed before the update, not in its loop:
// its error leaves the variable unlocked and unchanged.
TEST(UpdateInPlaceCompositions, AnOperandThatMayRaiseIsComputedFirst) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off");
  const Tensor start = ag::range(int64_t{0}, int64_t{64}, int64_t{1});
  ag::Variable v(start, "v");
  auto update = [&](Tensor x) { return v.assign_add(ag::constant(int64_t{100}) / x + 1); };
  auto f = ag::function(update);
  const Tensor ok = ag::fill({64}, ag::constant(int64_t{7})), zeros = ag::zeros({64}, ag::int64);
  const std::string plan = agtest::fused_plan(update, {}, ok);
  const std::string add = plan_line(plan, "AssignAddVariable");
  ASSERT_FALSE(add.empty()) << plan;
  // The division has a buffer of its own (not in the update's group); the cheap add still fuses.
  size_t divisions = 0;
  for (size_t at = plan.find(" = "); at != std::string::npos; at = plan.find(" = ", at + 1)) {
    const size_t begin = plan.rfind('\n', at) + 1, end = plan.find('\n', at);
    const std::string line = plan.substr(begin, end - begin);
    if (line.find("Div(") == std::string::npos) continue;
    ++divisions;
    EXPECT_NE(group_of(line), group_of(add)) << plan;
  }
  EXPECT_EQ(divisions, 1u) << plan;
  v.assign(start);
  f(ok);
  EXPECT_TRUE(agtest::same_tensor(start + 15, v.value(), {0, 0}));
  EXPECT_THROW(f(zeros), ag::InvalidArgumentError);
  EXPECT_TRUE(agtest::same_tensor(start + 15, v.value(), {0, 0}));  // unchanged, and not left locked
  f(ok);
  EXPECT_TRUE(agtest::same_tensor(start + 30, v.value(), {0, 0}));
}

}  // namespace
