// Side effects, TensorArrays and control flow in compiled code: print, variables, If/While with
// register, static, dynamically shaped and TensorArray state; input signatures with unknown dims.
#include <mutex>

#include "jit_test_util.h"
#include "test_data.h"

namespace {

// Captures ag::print output for the duration of a scope.
struct PrintCapture {
  std::string text;
  std::mutex mu;
  PrintCapture() {
    ag::set_print_sink([this](std::string_view s) {
      std::lock_guard lock(mu);
      text += s;
    });
  }
  ~PrintCapture() { ag::set_print_sink(nullptr); }
};

ag::Tensor print_and_compute(ag::Tensor x) {
  ag::print("x is", x, "sum", ag::reduce_sum(x));
  ag::Tensor y = x * 2;
  ag::print(y);
  return y + 1;
}

TEST(JitState, PrintRunsOnEveryCall) {
  const ag::Tensor x = ag::constant({1, 2, 3});
  std::string eager, interp, jit;
  {
    PrintCapture c;
    print_and_compute(x);
    eager = c.text;
  }
  {
    PrintCapture c;
    auto f = ag::function(print_and_compute, {.jit_compile = false});
    f(x);
    f(x);
    interp = c.text;
  }
  {
    PrintCapture c;
    auto f = ag::function(print_and_compute);
    f(x);
    f(x);
    jit = c.text;
  }
  EXPECT_EQ(eager, "x is [1 2 3] sum 6\n[2 4 6]\n");
  EXPECT_EQ(interp, eager + eager);
  EXPECT_EQ(jit, eager + eager);
}

TEST(JitState, VariablesReadAndAssign) {
  auto run = [](bool jit) {
    ag::Variable v(ag::zeros({3}), "v");
    ag::Variable count(0, "count");
    auto step = [&](ag::Tensor x) {
      v.assign_add(x);
      count.assign_add(1);
      ag::Tensor before = v.value();
      v.assign(v.value() * 2.0f);
      v.assign_sub(ag::ones({3}));
      return std::tuple{before, v.value() + 0.5f};
    };
    auto f = ag::function(step, {.jit_compile = jit});
    std::vector<ag::Tensor> outs;
    for (int i = 0; i < 3; ++i) {
      auto [a, b] = f(ag::constant({1.0f, 2.0f, 3.0f}) * static_cast<float>(i));
      outs.push_back(a);
      outs.push_back(b);
    }
    outs.push_back(v.value());
    outs.push_back(count.value());
    return outs;
  };
  const auto interp = run(false), jit = run(true);
  ASSERT_EQ(interp.size(), jit.size());
  for (size_t i = 0; i < jit.size(); ++i) EXPECT_TRUE(agtest::same_tensor(interp[i], jit[i])) << i;
  EXPECT_EQ(jit.back().item<int>(), 3);
}

ag::Tensor squares_with_tensor_array(ag::Tensor n) {
  ag::TensorArray ta(ag::float32);
  // The first write fixes the element shape before the loop (the tracer needs loop variables to
  // keep their rank, and an unwritten TensorArray has no element shape yet).
  ta = ta.write(0, -ag::ones({2}));
  ag::Tensor i = 1;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   ta = ta.write(i, ag::cast(i * i, ag::float32) * ag::ones({2}));
                   i += 1;
                 },
                 ag::state(ta, i), {"ta", "i"}, AG_SOURCE_LOC("ta.cpp", 1));
  return ta.stack() + ag::cast(ta.size(), ag::float32);
}

TEST(JitState, TensorArrayInALoop) {
  for (int n : {1, 5, 40}) agtest::expect_three_way("tensor array n=" + std::to_string(n), squares_with_tensor_array, {}, ag::Tensor(n));
}

// The guide's dynamic_rnn: a TensorArray with no element shape yet, written in a staged loop
// whose trip count is read from the input's shape.
ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  input_data = ag::transpose(input_data, {1, 0, 2});
  ag::TensorArray states(ag::float32);
  ag::Tensor state = initial_state;
  ag::for_stmt(ag::range(ag::shape_of(input_data)[0]), ag::no_extra_test,
               [&](ag::Tensor i) {
                 state = ag::tanh(input_data[i] + state);
                 states = states.write(i, state);
               },
               ag::state(state, states), {"state", "states"}, AG_SOURCE_LOC("rnn.cpp", 1));
  return ag::transpose(states.stack(), {1, 0, 2});
}

TEST(JitState, UntypedTensorArrayInAStagedLoop) {
  // (Not 0: eagerly an empty, never-written TensorArray stacks to shape [0], as in TensorFlow.)
  for (int seq_len : {1, 2, 7})
    agtest::expect_three_way("dynamic_rnn seq_len=" + std::to_string(seq_len), dynamic_rnn, {},
                             ag::random_uniform({3, seq_len, 5}, ag::float32, -1, 1, seq_len),
                             ag::random_uniform({3, 5}, ag::float32, -1, 1, 99));
}

// A loop whose carried tensor grows: its shape becomes [?] and lives in owned buffers.
ag::Tensor growing(ag::Tensor n, ag::Tensor x) {
  ag::Tensor acc = ag::reshape(x, {1});
  ag::Tensor i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   acc = ag::concat({acc, ag::reshape(ag::cast(i, ag::float32) + x, {1})}, 0);
                   i += 1;
                 },
                 ag::state(acc, i), {"acc", "i"}, AG_SOURCE_LOC("grow.cpp", 1));
  return acc * 2.0f;
}

TEST(JitControl, WhileWithDynamicShapes) {
  for (int n : {0, 1, 7, 100}) agtest::expect_three_way("growing n=" + std::to_string(n), growing, {}, ag::Tensor(n), ag::Tensor(0.5f));
}

// Static-shaped tensors, registers and loop invariants carried together; a nested If chooses
// between a computed value and a pass-through; variables swap places each iteration.
std::tuple<ag::Tensor, ag::Tensor, ag::Tensor> mixed_loop(ag::Tensor x, ag::Tensor n) {
  ag::Tensor a = x, b = x * 0.5f, k = 0, total = 0.0f;
  ag::while_stmt([&] { return k < n; },
                 [&] {
                   ag::Tensor t = a;
                   a = b;
                   b = t;
                   ag::if_stmt(ag::reduce_sum(a) > 0.0f, [&] { a = ag::tanh(a) + x; }, [] {}, ag::state(a), {"a"},
                               AG_SOURCE_LOC("mixed.cpp", 2));
                   total += ag::reduce_mean(a * b);
                   k += 1;
                 },
                 ag::state(a, b, k, total), {"a", "b", "k", "total"}, AG_SOURCE_LOC("mixed.cpp", 1));
  return {a, b, total};
}

TEST(JitControl, WhileWithStaticStateSwapsAndNestedIf) {
  for (int n : {0, 1, 2, 9})
    agtest::expect_three_way("mixed n=" + std::to_string(n), mixed_loop, {.rtol = 1e-4, .atol = 1e-5},
                             agtest::sample(ag::float32, {4, 3}, static_cast<uint64_t>(n), agtest::Values::Moderate), ag::Tensor(n));
}

// Branches that give different shapes: the If's output has an unknown dim.
ag::Tensor branch_shapes(ag::Tensor x, ag::Tensor c) {
  ag::Tensor y;
  ag::if_stmt(c, [&] { y = ag::concat({x, x}, 0); }, [&] { y = x * 3; }, ag::state(y), {"y"}, AG_SOURCE_LOC("branch.cpp", 1));
  return y + 1;
}

TEST(JitControl, IfWithDifferentBranchShapes) {
  const ag::Tensor x = ag::constant({1, 2, 3});
  agtest::expect_three_way("then", branch_shapes, {}, x, ag::Tensor(true));
  agtest::expect_three_way("else", branch_shapes, {}, x, ag::Tensor(false));
  auto f = ag::function(branch_shapes);
  EXPECT_EQ(f(x, ag::Tensor(true)).shape(), ag::Shape({6}));
  EXPECT_EQ(f(x, ag::Tensor(false)).shape(), ag::Shape({3}));
}

TEST(JitControl, InputSignatureWithUnknownDims) {
  auto fn = [](ag::Tensor x, ag::Tensor y) {
    return std::tuple{ag::reduce_sum(ag::relu(x * y + 1.0f), {1}), ag::matmul(x, ag::transpose(x)), ag::reshape(x, {-1}),
                      ag::concat({x, y * ag::ones_like(x)}, 1), x};
  };
  const ag::FunctionOptions spec{.input_signature = {ag::TensorSpec({-1, -1}, ag::float32), ag::TensorSpec({-1}, ag::float32)}};
  auto interp = ag::function(fn, [&] { auto o = spec; o.jit_compile = false; return o; }());
  auto jit = ag::function(fn, spec);
  uint64_t seed = 1;
  for (const auto& [r, c] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {5, 1}, {0, 4}, {3, 0}, {40, 70}}) {
    const ag::Tensor x = agtest::sample(ag::float32, {r, c}, seed++, agtest::Values::Moderate);
    const ag::Tensor y = agtest::sample(ag::float32, {c}, seed++, agtest::Values::Moderate);
    agtest::expect_same(fn(x, y), jit(x, y), {.rtol = 1e-4, .atol = 1e-4}, "dynamic jit");
    agtest::expect_same(interp(x, y), jit(x, y), {.rtol = 1e-4, .atol = 1e-4}, "dynamic interp");
  }
  EXPECT_EQ(jit.tracing_count(), 1);
  // y broadcasts against x's last dim: a mismatch in run-time data is an InvalidArgumentError, in
  // compiled code as in the interpreter.
  const ag::Tensor bad_x = agtest::sample(ag::float32, {2, 3}, 1), bad_y = agtest::sample(ag::float32, {4}, 2);
  EXPECT_THROW(jit(bad_x, bad_y), ag::InvalidArgumentError);
  EXPECT_THROW(interp(bad_x, bad_y), ag::InvalidArgumentError);
}

TEST(JitControl, NestedFunctionsAndCond) {
  auto inner = ag::function([](ag::Tensor x) { return ag::cond(ag::reduce_sum(x) > 0.0f, [&] { return x * 2.0f; }, [&] { return -x; }); });
  auto outer = [&](ag::Tensor x) { return inner(x) + inner(x * -1.0f); };
  agtest::expect_three_way("nested", outer, {}, agtest::sample(ag::float32, {6}, 3, agtest::Values::Moderate));
}

}  // namespace
