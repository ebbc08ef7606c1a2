// The native lowering of Variable reads/assignments, print and assert: the compiled code calls
// their typed helpers, results agree with eager and the interpreter, eager
// readers keep the value they got (copy-on-write), and assignments from two threads are atomic.
#include <thread>

#include "jit_test_util.h"

namespace {

using agtest::ir_calls;

// `steps` iterations of v.assign_add(by) in a staged loop; returns the last value read.
ag::Tensor add_in_a_loop(ag::Variable& v, ag::Tensor steps, ag::Tensor by) {
  ag::Tensor i = ag::Tensor(int64_t{0});
  ag::while_stmt([&] { return i < steps; },
                 [&] {
                   v.assign_add(by);
                   i += int64_t{1};
                 },
                 ag::state(i), {"i"}, AG_SOURCE_LOC("add_in_a_loop.cpp", 3));
  return v.value();
}

TEST(JitStatefulNative, VariableOpsCallTypedHelpers) {
  auto body = [](ag::Variable& v, ag::Variable& m, ag::Tensor x) {
    ag::Tensor before = v.value();
    v.assign_add(x);
    v.assign_sub(ag::Tensor(0.5f));  // a scalar broadcast over the variable
    m.assign(x * 2);
    m.assign_add(ag::constant({1.0f, 2.0f, 3.0f}));
    return before + v.value() + m.value();
  };
  const ag::Tensor x = ag::constant({1.0f, 2.0f, 3.0f});
  auto run = [&](int mode) {
    ag::Variable v(ag::constant({10.0f, 20.0f, 30.0f}), "v");
    ag::Variable m(ag::zeros({3}), "m");
    auto call = [&](ag::Tensor a) { return body(v, m, a); };
    std::vector<ag::Tensor> out;
    if (mode == 0) {
      for (int k = 0; k < 3; ++k) out.push_back(call(x));
    } else {
      auto f = ag::function(call, {.jit_compile = mode == 2});
      for (int k = 0; k < 3; ++k) out.push_back(f(x));
      if (mode == 2) {
        const std::string ir = f.get_concrete_function(x).llvm_ir(false);
        // Values under 4 KB are copied (read in place: ReadsInPlaceAndUpdatesWithoutACopy).
        EXPECT_TRUE(ir_calls(ir, "agc_rt_var_read")) << ir;
        EXPECT_FALSE(ir_calls(ir, "agc_rt_var_borrow")) << ir;
        EXPECT_TRUE(ir_calls(ir, "agc_rt_var_assign")) << ir;
      }
    }
    out.push_back(v.value());
    out.push_back(m.value());
    return out;
  };
  const auto eager = run(0), interp = run(1), jit = run(2);
  ASSERT_EQ(eager.size(), jit.size());
  for (size_t k = 0; k < eager.size(); ++k) {
    EXPECT_TRUE(agtest::same_tensor(eager[k], interp[k], {0, 0})) << k << ": " << interp[k].str();
    EXPECT_TRUE(agtest::same_tensor(eager[k], jit[k], {0, 0})) << k << ": " << jit[k].str() << " vs " << eager[k].str();
  }
}

TEST(JitStatefulNative, BroadcastAssignAddMatchesEager) {
  auto body = [](ag::Variable& v, ag::Tensor row) {
    v.assign_add(row);  // [3] into [2, 3]
    return v.value();
  };
  const ag::Tensor row = ag::constant({int32_t{1}, int32_t{2}, int32_t{3}});
  ag::Variable eager_v(ag::zeros({2, 3}, ag::int32)), jit_v(ag::zeros({2, 3}, ag::int32));
  auto f = ag::function([&](ag::Tensor r) { return body(jit_v, r); });
  for (int k = 0; k < 2; ++k) {
    const ag::Tensor e = body(eager_v, row), j = f(row);
    EXPECT_TRUE(agtest::same_tensor(e, j, {0, 0})) << j.str();
  }
}

TEST(JitStatefulNative, AnEagerReaderKeepsTheValueItGot) {
  ag::Variable v(ag::constant({1.0f, 2.0f}), "v");
  auto f = ag::function([&](ag::Tensor x) {
    v.assign_add(x);
    return x;
  });
  const ag::Tensor one = ag::constant({1.0f, 1.0f});
  const ag::Tensor held = v.value();  // shares the variable's buffer
  f(one);
  EXPECT_FLOAT_EQ(held.data<float>()[0], 1.0f);  // unchanged: the assignment copied first
  EXPECT_FLOAT_EQ(v.value().data<float>()[0], 2.0f);
  const ag::Tensor held2 = v.value();
  f(one);
  f(one);
  EXPECT_FLOAT_EQ(held2.data<float>()[1], 3.0f);
  EXPECT_FLOAT_EQ(v.value().data<float>()[1], 5.0f);
}

// An optimizer's update (Adam's moment: m.assign(m * b + g * (1 - b)), then the weight from the
// new moment) reads its variables in place and lets them go at their last use: the weight's
// update then writes into its own buffer (the buffer's address is kept), and the new moment,
// computed in a buffer of its own, becomes m's value (agc_rt_var_assign_owned): no copy either
// way, with the values of eager and the interpreter. A tensor an eager reader holds makes the
// next update copy first, as eagerly; a read the function still needs after an assignment of
// the same variable keeps the value it read.
TEST(JitStatefulNative, ReadsInPlaceAndUpdatesWithoutACopy) {
  auto step = [](ag::Variable& w, ag::Variable& m, ag::Tensor g) {
    const ag::Tensor m_t = m.assign(m * 0.9f + g * 0.1f);
    w.assign_sub(m_t * 0.5f);
    return w.value() * w.value();
  };
  // 2048 floats: values of 4 KB and more are read in place; 300 (1200 bytes) are copied, the new
  // moment still handed over and its value read back for the weight's update.
  for (const int64_t n : {int64_t{2048}, int64_t{300}}) {
    const ag::Tensor g = ag::random_uniform({n}, ag::float32, -1, 1, 4);
    std::vector<ag::Tensor> results[3];
    for (int mode = 0; mode < 3; ++mode) {
      ag::Variable w(ag::random_uniform({n}, ag::float32, -1, 1, 5), "w"), m(ag::zeros({n}), "m");
      auto f = ag::function([&](ag::Tensor x) { return step(w, m, x); }, {.jit_compile = mode == 2});
      auto call = [&] { return mode == 0 ? step(w, m, g) : f(g); };
      results[mode].push_back(call());
      const void* w_buffer = w.value().data<float>();
      const ag::Tensor m_before = m.value();  // an eager reader of m: a donated value replaces m's, so it keeps its own
      const std::vector<float> m_values = m_before.to_vector<float>();
      for (int k = 0; k < 3; ++k) results[mode].push_back(call());
      EXPECT_EQ(m_before.to_vector<float>(), m_values);
      if (mode == 2) {
        const std::string ir = f.get_concrete_function(g).llvm_ir(false);
        EXPECT_EQ(ir_calls(ir, "agc_rt_var_borrow"), n == 2048) << ir;
        EXPECT_EQ(ir_calls(ir, "agc_rt_var_release"), n == 2048) << ir;
        EXPECT_TRUE(ir_calls(ir, "agc_rt_var_assign_owned")) << ir;
        if (n == 2048) EXPECT_EQ(w.value().data<float>(), w_buffer) << "w was copied";
      }
      const ag::Tensor held = w.value();  // an eager reader: the next step copies w first
      results[mode].push_back(call());
      results[mode].push_back(held);
      EXPECT_NE(w.value().data<float>(), held.data<float>());
      results[mode].push_back(w.value());
      results[mode].push_back(m.value());
    }
    for (int mode = 1; mode < 3; ++mode)
      for (size_t k = 0; k < results[0].size(); ++k)
        EXPECT_TRUE(agtest::same_tensor(results[0][k], results[mode][k], {0, 0})) << n << " mode " << mode << " result " << k;
  }
  // A read held across an assignment of its variable keeps the value it read.
  const ag::Tensor start = ag::random_uniform({4, 1024}, ag::float32, -1, 1, 6);
  ag::Variable v(start, "v");
  auto before_and_after = ag::function([&](ag::Tensor x) {
    const ag::Tensor before = v.value();
    v.assign_add(v.value() * x);
    return std::make_tuple(before, v.value() + before);
  });
  const auto [before, after] = before_and_after(ag::constant(2.0f));
  EXPECT_TRUE(agtest::same_tensor(before, start, {0, 0}));
  EXPECT_TRUE(agtest::same_tensor(v.value(), start * 3.0f, {0, 0}));
  EXPECT_TRUE(agtest::same_tensor(after, v.value() + start, {0, 0}));
  EXPECT_TRUE(ir_calls(before_and_after.get_concrete_function(ag::constant(2.0f)).llvm_ir(false), "agc_rt_var_borrow"));
}

// Reads in place and handed-over assignments in combination: a gradient under a tape inside the
// trace (its backward reads the weight in place), the step as a nested Function, and steps in a
// staged loop (whose body copies its reads) after one at the top; eager == interpreter == JIT.
TEST(JitStatefulNative, InPlaceVariablesUnderATapeNestedAndInAStagedLoop) {
  const ag::Tensor x = ag::random_uniform({4, 2048}, ag::float32, -1, 1, 7);
  auto run = [&](int mode) {
    ag::Variable w(ag::random_uniform({2048}, ag::float32, -1, 1, 8), "w"), m(ag::zeros({2048}), "m");
    auto step = [&](ag::Tensor xs) {
      ag::GradientTape tape;
      const ag::Tensor loss = ag::reduce_sum(ag::square(xs * w.value()));
      const ag::Tensor g = tape.gradient(loss, w);
      const ag::Tensor m_t = m.assign(m * 0.9f + g * 0.1f);
      w.assign_sub(m_t * 0.01f);
      return loss;
    };
    auto inner = ag::function(step, {.jit_compile = mode == 2});
    auto outer = [&](ag::Tensor xs, ag::Tensor n) {
      ag::Tensor loss = inner(xs);
      ag::Tensor i = 0;
      ag::while_stmt([&] { return i < n; },
                     [&] {
                       loss = step(xs);
                       i += 1;
                     },
                     ag::state(loss, i), {"loss", "i"}, AG_SOURCE_LOC("stateful_native_test.cpp", 0));
      return loss;
    };
    auto f = ag::function(outer, {.jit_compile = mode == 2});
    std::vector<ag::Tensor> out;
    for (int k = 0; k < 2; ++k) out.push_back(mode == 0 ? outer(x, ag::constant(3)) : f(x, ag::constant(3)));
    out.push_back(w.value());
    out.push_back(m.value());
    if (mode == 2) EXPECT_TRUE(ir_calls(inner.get_concrete_function(x).llvm_ir(false), "agc_rt_var_assign_owned"));
    return out;
  };
  const auto eager = run(0), interp = run(1), jit = run(2);
  for (size_t k = 0; k < eager.size(); ++k) {
    EXPECT_TRUE(agtest::same_tensor(eager[k], interp[k], {.rtol = 1e-5, .atol = 1e-6})) << k;
    EXPECT_TRUE(agtest::same_tensor(eager[k], jit[k], {.rtol = 1e-5, .atol = 1e-6})) << k;
  }
}

TEST(JitStatefulNative, AssignAddFromTwoThreadsIsExact) {
  ag::Variable total(int64_t{0}, "total");
  auto f = ag::function([&](ag::Tensor steps) { return add_in_a_loop(total, steps, ag::Tensor(int64_t{1})); });
  const ag::Tensor steps = ag::Tensor(int64_t{100000});
  const std::string ir = f.get_concrete_function(steps).llvm_ir(false);
  EXPECT_TRUE(ir_calls(ir, "agc_rt_var_add_scalar")) << ir;
  std::thread a([&] { f(steps); }), b([&] { f(steps); });
  a.join();
  b.join();
  EXPECT_EQ(total.value().item<int64_t>(), 200000);
}

// A scalar added to or subtracted from a scalar variable takes agc_rt_var_add_scalar (no shape
// dispatch): every numeric dtype, the new value used or not, eager == interpreter == JIT; an
// eager reader holding the value sends it through agc_rt_var_assign's copy-on-write instead.
TEST(JitStatefulNative, ScalarUpdatesTakeTheScalarHelper) {
  auto body = [](ag::Variable& v, ag::Tensor x) {
    ag::Tensor after_add = v.assign_add(x);  // used
    v.assign_sub(x * 3);                     // unused
    v.assign_add(x);
    return after_add * 2 + v.value();
  };
  for (ag::DType d : {ag::int32, ag::int64, ag::float32, ag::float64}) {
    const ag::Tensor x = ag::cast(ag::Tensor(int64_t{7}), d), start = ag::cast(ag::Tensor(int64_t{100}), d);
    std::vector<ag::Tensor> results[3];
    for (int mode = 0; mode < 3; ++mode) {
      ag::Variable v(start, "v");
      auto f = ag::function([&](ag::Tensor a) { return body(v, a); }, {.jit_compile = mode == 2});
      for (int k = 0; k < 3; ++k) results[mode].push_back(mode == 0 ? body(v, x) : f(x));
      const ag::Tensor held = v.value();  // shares the buffer: the next update copies first
      results[mode].push_back(mode == 0 ? body(v, x) : f(x));
      results[mode].push_back(held);
      results[mode].push_back(v.value());
      if (mode == 2) {
        const std::string ir = f.get_concrete_function(x).llvm_ir(false);
        EXPECT_TRUE(ir_calls(ir, "agc_rt_var_add_scalar")) << ag::dtype_name(d) << ir;
        EXPECT_FALSE(ir_calls(ir, "agc_rt_var_assign")) << ag::dtype_name(d) << ir;
      }
    }
    for (int mode = 1; mode < 3; ++mode)
      for (size_t k = 0; k < results[0].size(); ++k)
        EXPECT_TRUE(agtest::same_tensor(results[0][k], results[mode][k], {0, 0}))
            << ag::dtype_name(d) << " mode " << mode << " result " << k << ": " << results[mode][k].str() << " vs "
            << results[0][k].str();
  }
  // assign (not an update) keeps the general helper.
  ag::Variable v(1.0f, "v");
  auto f = ag::function([&](ag::Tensor a) { return v.assign(a); });
  EXPECT_TRUE(ir_calls(f.get_concrete_function(ag::Tensor(2.0f)).llvm_ir(false), "agc_rt_var_assign"));
}

TEST(JitStatefulNative, PrintAndAssertCallTheirHelpers) {
  auto body = [](ag::Tensor x) {
    ag::print("x =", x);
    ag::assert_true(x > 0, "x must be positive");
    return x + 1;
  };
  auto f = ag::function(body);
  const ag::Tensor x = ag::constant({1, 2});
  const std::string ir = f.get_concrete_function(x).llvm_ir(false);
  EXPECT_TRUE(ir_calls(ir, "agc_rt_print")) << ir;
  EXPECT_TRUE(ir_calls(ir, "agc_rt_assert_failed")) << ir;
  std::string printed;
  ag::set_print_sink([&](std::string_view s) { printed += s; });
  f(x);
  std::string eager_error, jit_error;
  try {
    body(ag::constant({1, -2}));
  } catch (const ag::InvalidArgumentError& e) {
    eager_error = e.what();
  }
  try {
    f(ag::constant({1, -2}));
  } catch (const ag::InvalidArgumentError& e) {
    jit_error = e.what();
  }
  ag::set_print_sink(nullptr);
  EXPECT_EQ(printed.substr(0, 10), "x = [1 2]\n");
  EXPECT_FALSE(eager_error.empty());
  EXPECT_EQ(eager_error, jit_error);
}

}  // namespace
