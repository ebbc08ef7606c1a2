// Variables as arguments are part of the signature by dtype, shape and aliasing, not identity
// (TensorFlow 2; DESIGN.md 2026-11-28): a Function traced with one ag::Variable& runs with another
// of the same dtype and shape without tracing again, reading and assigning the Variable it was
// given; compiled, the bound concrete function runs the same machine code. Eager == interpreter
// == compiled, under a tape, inside another trace, in a staged loop, with a Variable passed twice.
#include <memory>
#include <thread>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

// Adds x to v `n` times in a staged loop and returns v's value scaled by w (a second Variable
// argument, possibly v itself).
Tensor accumulate(ag::Variable& v, ag::Variable& w, Tensor x, Tensor n) {
  Tensor i = ag::Tensor(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   v.assign_add(x);
                   i += int64_t{1};
                 },
                 ag::state(i), {"i"}, AG_SOURCE_LOC("accumulate.cpp", 3));
  return v.value() * w.value();
}

struct Calls {
  std::vector<Tensor> outputs;  // each call's result, then each Variable's final value
  int64_t traces = 0, compiles = 0;
};

// Calls accumulate with three Variables of one spec in turn (a, b, c), each paired with itself
// as w, then a paired with b. mode: 0 eager, 1 interpreter, 2 JIT.
Calls run_three_variables(int mode) {
  ag::Variable a(ag::constant({1.f, 2.f}), "a"), b(ag::constant({10.f, 20.f}), "b"), c(ag::constant({-1.f, 0.f}), "c");
  const Tensor x = ag::constant({0.5f, 0.25f}), n = ag::Tensor(int64_t{2});
  Calls r;
  auto calls = [&](auto&& f) {
    for (ag::Variable* v : {&a, &b, &c, &a, &b})
      r.outputs.push_back(f(*v, *v, x, n));
    r.outputs.push_back(f(a, b, x, n));  // two Variables: another aliasing, another trace
    r.outputs.push_back(f(b, c, x, n));  // same aliasing as (a, b): the same trace
  };
  if (mode == 0) {
    calls(accumulate);
  } else {
    auto f = ag::function(accumulate, {.jit_compile = mode == 2, .name = "accumulate"});
    calls(f);
    r.traces = f.tracing_count();
    r.compiles = f.stats().compiles + f.stats().disk_hits;
  }
  for (ag::Variable* v : {&a, &b, &c}) r.outputs.push_back(v->value());
  return r;
}

TEST(VariableArguments, AnotherVariableOfTheSameSpecReusesTheTrace) {
  const Calls eager = run_three_variables(0), interp = run_three_variables(1), jit = run_three_variables(2);
  ASSERT_EQ(eager.outputs.size(), jit.outputs.size());
  for (size_t k = 0; k < eager.outputs.size(); ++k) {
    EXPECT_TRUE(agtest::same_tensor(eager.outputs[k], interp.outputs[k], {0, 0})) << k << ": " << interp.outputs[k].str();
    EXPECT_TRUE(agtest::same_tensor(eager.outputs[k], jit.outputs[k], {0, 0})) << k << ": " << jit.outputs[k].str();
  }
  // (v, v) once and (v, w) once, whichever Variables: two traces, each compiled once.
  EXPECT_EQ(interp.traces, 2);
  EXPECT_EQ(jit.traces, 2);
  EXPECT_EQ(jit.compiles, 2);
}

TEST(VariableArguments, AnotherDtypeOrShapeTracesAgain) {
  auto f = ag::function([](ag::Variable& v, Tensor x) { return v.value() + x; }, {.name = "plus"});
  ag::Variable v2(ag::constant({1.f, 2.f})), w2(ag::constant({3.f, 4.f})), v3(ag::constant({1.f, 2.f, 3.f}));
  ag::Variable d2(ag::constant({1.0, 2.0}));
  EXPECT_EQ(f(v2, ag::ones({2})).to_vector<float>(), (std::vector<float>{2.f, 3.f}));
  EXPECT_EQ(f(w2, ag::ones({2})).to_vector<float>(), (std::vector<float>{4.f, 5.f}));
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f(v3, ag::ones({3})).to_vector<float>(), (std::vector<float>{2.f, 3.f, 4.f}));
  EXPECT_EQ(f(d2, ag::ones({2}, ag::float64)).to_vector<double>(), (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(f.tracing_count(), 3);
  // The retrace log names the Variable's type, not "another Variable".
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("float64[2]"), std::string::npos) << sigs;
}

TEST(VariableArguments, AConcreteFunctionTakesAnyVariableOfItsSpec) {
  auto f = ag::function([](ag::Variable& v, Tensor x) {
    v.assign(v.value() * x);
    return v.value();
  });
  ag::Variable a(ag::constant({1.f, 2.f}), "a"), b(ag::constant({3.f, 4.f}), "b"), c(ag::constant({1.f}), "c");
  ag::ConcreteFunction cf = f.get_concrete_function(a, ag::TensorSpec({2}, ag::float32));
  EXPECT_EQ(cf(b, ag::constant({2.f, 2.f})).to_vector<float>(), (std::vector<float>{6.f, 8.f}));
  EXPECT_EQ(b.value().to_vector<float>(), (std::vector<float>{6.f, 8.f}));
  EXPECT_EQ(a.value().to_vector<float>(), (std::vector<float>{1.f, 2.f}));  // untouched
  EXPECT_EQ(cf(a, ag::constant({3.f, 3.f})).to_vector<float>(), (std::vector<float>{3.f, 6.f}));
  const Tensor ones = ag::constant({1.f, 1.f});
  auto call_with_c = [&] { cf(c, ones); };
  agtest::expect_raises<ag::TypeError>(call_with_c, {"argument 0", "'c' (float32[1])", "expected a Variable of", "shape=(2,)"});
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(VariableArguments, GradientsFollowTheBoundVariable) {
  auto loss = ag::function([](ag::Variable& w, Tensor x) { return ag::reduce_sum(ag::tanh(w.value() * x)); });
  ag::Variable w1(ag::constant({0.5f, -1.f}), "w1"), w2(ag::constant({2.f, 0.25f}), "w2");
  const Tensor x = ag::constant({1.5f, 3.f});
  auto eager_grad = [&](ag::Variable& w) {
    ag::GradientTape tape;
    return tape.gradient(ag::reduce_sum(ag::tanh(w.value() * x)), w);
  };
  auto function_grad = [&](ag::Variable& w) {
    ag::GradientTape tape;
    return tape.gradient(loss(w, x), w);
  };
  (void)loss(w1, x);  // traced with w1
  for (ag::Variable* w : {&w2, &w1, &w2})
    EXPECT_TRUE(agtest::same_tensor(eager_grad(*w), function_grad(*w), {1e-6, 1e-6})) << function_grad(*w).str();
  // A tape inside another Function's trace, which calls `loss` with either Variable.
  auto step = ag::function([&](ag::Variable& w) {
    ag::GradientTape tape;
    Tensor y = loss(w, x);
    Tensor g = tape.gradient(y, w);
    w.assign_sub(0.1f * g);
    return y;
  });
  for (int k = 0; k < 2; ++k) {
    const Tensor want1 = w1.value() - 0.1f * eager_grad(w1), want2 = w2.value() - 0.1f * eager_grad(w2);
    (void)step(w1);
    (void)step(w2);
    EXPECT_TRUE(agtest::same_tensor(want1, w1.value(), {1e-6, 1e-6})) << w1.value().str();
    EXPECT_TRUE(agtest::same_tensor(want2, w2.value(), {1e-6, 1e-6})) << w2.value().str();
  }
  EXPECT_EQ(step.tracing_count(), 1);
  EXPECT_EQ(loss.tracing_count(), 1);
}

TEST(VariableArguments, ManyVariablesFromTwoThreadsEachReadTheirOwn) {
  // More Variables than a concrete function keeps bindings for (8), from two threads at once:
  // bindings are made, dropped and made again while calls run on them.
  auto f = ag::function([](ag::Variable& v, Tensor x) {
    v.assign_add(x);
    return v.value() * 2.f;
  });
  std::vector<std::unique_ptr<ag::Variable>> vars;
  for (int k = 0; k < 12; ++k) vars.push_back(std::make_unique<ag::Variable>(ag::constant({float(k), 0.f})));
  auto work = [&](int first) {
    for (int round = 0; round < 50; ++round)
      for (int k = first; k < 12; k += 2) {
        const Tensor out = f(*vars[static_cast<size_t>(k)], ag::constant({0.f, 1.f}));
        const auto got = out.to_vector<float>();
        if (got[0] != 2.f * float(k)) ADD_FAILURE() << "Variable " << k << " read " << got[0];
      }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(vars[static_cast<size_t>(k)]->value().to_vector<float>(), (std::vector<float>{float(k), 50.f}));
  EXPECT_EQ(f.tracing_count(), 1);
}

}  // namespace
