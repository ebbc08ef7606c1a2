// Staged for, as ag-rewrite emits it (docs/operators.md): over ranges and tensors, unrolled
// over concrete iterables, with TensorArray accumulation.
#include <regex>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;
using agtest::interpreted;

#define LOC(line) AG_SOURCE_LOC("cf.cpp", line)

void fizzbuzz(Tensor n, int& traced_loop, int& traced_branches) {
  ag::for_stmt(
      ag::range(1, n + 1), ag::no_extra_test,
      [&](Tensor i) {
        ++traced_loop;
        ag::if_stmt(i % 15 == 0, [&] { ++traced_branches, ag::print("fizzbuzz"); },
                    [&] {
                      ag::if_stmt(i % 3 == 0, [&] { ++traced_branches, ag::print("fizz"); },
                                  [&] {
                                    ag::if_stmt(i % 5 == 0, [&] { ++traced_branches, ag::print("buzz"); },
                                                [&] { ++traced_branches, ag::print(i); }, ag::state(), {}, LOC(204));
                                  },
                                  ag::state(), {}, LOC(203));
                    },
                    ag::state(), {}, LOC(202));
      },
      ag::state(), {}, LOC(201));
}

TEST(StagedFor, FizzBuzzOverRange) {
  agtest::PrintCapture prints;
  int traced_loop = 0, traced_branches = 0;
  auto f = ag::function([&](Tensor n) { fizzbuzz(n, traced_loop, traced_branches); }, interpreted());
  f(Tensor(5));
  EXPECT_EQ(prints.text(), "1\n2\nfizz\n4\nbuzz\n");
  f(Tensor(15));
  EXPECT_EQ(traced_loop, 1);
  EXPECT_EQ(traced_branches, 4);
  EXPECT_EQ(prints.lines().size(), 20u);
  EXPECT_EQ(prints.lines().back(), "fizzbuzz\n");
  EXPECT_EQ(f.concrete_functions()[0].graph_text().find("Gather"), std::string::npos)
      << "a range loop computes its element, it does not index the range";
}

TEST(StagedFor, OverTheRowsOfASymbolicTensorWithBreak) {
  auto body = [](Tensor m) {
    Tensor total = ag::zeros({2});
    Tensor ag__break_1 = false;
    ag::for_stmt(
        m, [&] { return ag::not_(ag__break_1); },
        [&](Tensor row) {
          ag::if_stmt(ag::reduce_sum(row) < 0, [&] { ag__break_1 = true; }, [&] { total = total + row; },
                      ag::state(ag__break_1, total), {"ag__break_1", "total"}, LOC(211));
        },
        ag::state(total, ag__break_1), {"total", "ag__break_1"}, LOC(210));
    return total;
  };
  auto f = ag::function(body, {.input_signature = {ag::TensorSpec({-1, 2}, ag::float32)}, .jit_compile = false});
  Tensor m = ag::constant({{1.f, 2.f}, {3.f, 4.f}, {-10.f, 0.f}, {100.f, 100.f}});
  EXPECT_EQ(f(m).to_vector<float>(), (std::vector<float>{4.f, 6.f}));
  EXPECT_EQ(body(m).to_vector<float>(), (std::vector<float>{4.f, 6.f}));
  EXPECT_EQ(f(ag::zeros({0, 2})).to_vector<float>(), (std::vector<float>{0.f, 0.f}));
}

// A tensor loop whose condition is a constant while tracing (`t < 40`, t a constant tensor) runs
// natively, its body copied into the graph each time: counted, and from 32 iterations on a
// warning names the loop, once per loop; a staged one (a traced trip count) warns of nothing.
TEST(StagedFor, AConstantConditionLoopOfManyIterationsWarnsOnceAndCounts) {
  agtest::LogCapture logs(static_cast<unsigned>(ag::detail::LogTopic::Trace));
  auto count_to = [](int64_t limit, uint32_t line) {
    return [limit, line](Tensor x, Tensor n) {
      Tensor t = int64_t{0};
      Tensor acc = x;
      ag::while_stmt([&] { return t < (limit > 0 ? Tensor(limit) : n); }, [&] { acc = acc + 1.0f, t = t + int64_t{1}; },
                     ag::state(acc, t), {"acc", "t"}, LOC(line));
      return acc;
    };
  };
  auto unrolled = ag::function(count_to(40, 230), {.jit_compile = false, .name = "unrolled"});
  const Tensor n = Tensor(int64_t{40});
  EXPECT_EQ(unrolled(Tensor(1.0f), n).item<float>(), 41.0f);
  EXPECT_EQ(unrolled(ag::constant({1.0f, 2.0f}), n).to_vector<float>(), (std::vector<float>{41.0f, 42.0f}));  // a retrace
  EXPECT_EQ(logs.count_containing("40 plain-loop iterations unrolled"), 2u);
  EXPECT_EQ(logs.count_containing("agc: warning: Function 'unrolled': the loop at cf.cpp:230 ran 40 iterations while tracing"), 1u);
  auto few = ag::function(count_to(5, 231), {.jit_compile = false, .name = "few"});
  EXPECT_EQ(few(Tensor(1.0f), n).item<float>(), 6.0f);
  EXPECT_EQ(logs.count_containing("optimization, 5 plain-loop iterations unrolled"), 1u);
  EXPECT_EQ(logs.count_containing("cf.cpp:231"), 0u);
  auto staged = ag::function(count_to(0, 232), {.jit_compile = false, .name = "staged"});
  EXPECT_EQ(staged(Tensor(1.0f), n).item<float>(), 41.0f);
  EXPECT_NE(staged.concrete_functions()[0].graph_text().find("While"), std::string::npos);
  EXPECT_EQ(logs.count_containing("cf.cpp:232"), 0u);
  EXPECT_EQ(logs.count_containing("optimization, 0 plain-loop iterations unrolled"), 1u);
}

TEST(StagedFor, ConcreteIterableUnrollsAndCountsIterations) {
  agtest::LogCapture logs(static_cast<unsigned>(ag::detail::LogTopic::Trace));
  auto f = ag::function(
      [](Tensor x) {
        Tensor acc = x;
        ag::for_stmt(ag::range(4), ag::no_extra_test, [&](Tensor i) { acc = acc + i; }, ag::state(acc), {"acc"}, LOC(220));
        return acc;
      },
      interpreted());
  EXPECT_EQ(f(Tensor(10)).item<int>(), 16);
  EXPECT_EQ(f.concrete_functions()[0].graph_text().find("While"), std::string::npos);
  EXPECT_EQ(logs.count_containing("4 plain-loop iterations unrolled"), 1u);
}

TEST(StagedFor, TensorArrayAccumulation) {
  // The guide's dynamic_rnn: [batch, time, features] -> per-step running sums.
  auto dynamic_rnn = ag::function(
      [](Tensor input_data, Tensor initial_state) {
        input_data = ag::transpose(input_data, {1, 0, 2});
        const int64_t max_seq_len = input_data.shape()[0];
        ag::TensorArray states(ag::float32, max_seq_len);
        Tensor state = initial_state;
        ag::for_stmt(ag::range(Tensor(max_seq_len)), ag::no_extra_test,
                     [&](Tensor i) {
                       state = input_data[i] + state;
                       states = states.write(i, state);
                     },
                     ag::state(state, states), {"state", "states"}, LOC(230));
        return ag::transpose(states.stack(), {1, 0, 2});
      },
      interpreted());
  Tensor in = ag::random_uniform({2, 3, 4}, ag::float32, 0, 1, 7);
  Tensor out = dynamic_rnn(in, ag::zeros({2, 4}));
  ASSERT_EQ(out.shape(), ag::Shape({2, 3, 4}));
  const auto x = in.to_vector<float>(), y = out.to_vector<float>();
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 4; ++f) {
      float acc = 0;
      for (int t = 0; t < 3; ++t) {
        acc += x[(b * 3 + t) * 4 + f];
        EXPECT_FLOAT_EQ(y[(b * 3 + t) * 4 + f], acc);
      }
    }
}

// A TensorArray with no element shape yet is a loop variable: the first traced write types it
// (list<f32[*]> -> list<f32[2,4]>), and one trace serves every sequence length.
TEST(StagedFor, UntypedTensorArrayInAStagedLoop) {
  auto running_sums = ag::function(
      [](Tensor input_data) {
        input_data = ag::transpose(input_data, {1, 0, 2});
        ag::TensorArray states(ag::float32);
        Tensor state = ag::zeros({2, 4});
        ag::for_stmt(ag::range(ag::shape_of(input_data)[0]), ag::no_extra_test,
                     [&](Tensor i) {
                       state = input_data[i] + state;
                       states = states.write(i, state);
                     },
                     ag::state(state, states), {"state", "states"}, LOC(231));
        return ag::transpose(states.stack(), {1, 0, 2});
      },
      {.input_signature = {ag::TensorSpec({2, -1, 4}, ag::float32)}, .jit_compile = false});
  for (int seq_len : {1, 3, 6}) {
    Tensor in = ag::random_uniform({2, seq_len, 4}, ag::float32, 0, 1, seq_len);
    Tensor out = running_sums(in);
    ASSERT_EQ(out.shape(), ag::Shape({2, seq_len, 4}));
    const auto x = in.to_vector<float>(), y = out.to_vector<float>();
    for (int b = 0; b < 2; ++b)
      for (int f = 0; f < 4; ++f) {
        float acc = 0;
        for (int t = 0; t < seq_len; ++t) {
          acc += x[(b * seq_len + t) * 4 + f];
          EXPECT_FLOAT_EQ(y[(b * seq_len + t) * 4 + f], acc);
        }
      }
  }
  EXPECT_EQ(running_sums.tracing_count(), 1);
  const std::string text = running_sums.get_concrete_function().graph_text();
  EXPECT_NE(text.find("list<f32[*]>"), std::string::npos) << text;
  EXPECT_NE(text.find("While"), std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(ListStack\(%\d+#1\) \{shape=\[2,4\]\} : f32\[\?,2,4\])"))) << text;
}

TEST(StagedFor, ReadingAnUntypedTensorArrayWhileTracingIsAnError) {
  auto f = ag::function(
      [](Tensor n) {
        ag::TensorArray ta(ag::float32);
        Tensor last = 0.0f;
        ag::for_stmt(ag::range(n), ag::no_extra_test, [&](Tensor i) { last = ta.read(i); }, ag::state(last),
                     {"last"}, LOC(250));
        return last;
      },
      interpreted());
  AG_EXPECT_ERROR(ag::ValueError, f(Tensor(3)), "TensorArray", "no element shape yet", "written");
  // Writing an element of another rank than the first write is a shape error while tracing.
  auto g = ag::function(
      [](Tensor n) {
        ag::TensorArray ta(ag::float32);
        ta = ta.write(0, ag::zeros({2}));
        ag::for_stmt(ag::range(n), ag::no_extra_test, [&](Tensor i) { ta = ta.write(i, ag::zeros({2, 2})); },
                     ag::state(ta), {"ta"}, LOC(260));
        return ta.stack();
      },
      interpreted());
  AG_EXPECT_ERROR(ag::ValueError, g(Tensor(3)), "TensorArray::write", "[2]", "[2,2]");
}

}  // namespace
