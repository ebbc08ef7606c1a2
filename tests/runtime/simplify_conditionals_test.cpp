// simplify_conditionals: the If chains of lowered early returns become one If; results and the
// order of side effects stay as they were. Functions are written as ag-rewrite emits them.
#include <ag/graph/passes.h>

#include "test_util.h"

namespace {

using agtest::count_op;
using ag::Tensor;
using agtest::interpreted;

#define LOC(line) AG_SOURCE_LOC("ret.cpp", line)

// if (x > 0) return x; return 0;
Tensor simple_relu(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::if_stmt(x > 0, [&] { ag__retval = x, ag__do_return = true; }, [&] {}, ag::state(ag__do_return, ag__retval),
              {"ag__do_return", "ag__retval"}, LOC(1));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag__retval = Tensor(0.f), ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(2));
  return ag__retval;
}

TEST(SimplifyConditionals, EarlyReturnBecomesOneIf) {
  auto f = ag::function(simple_relu, interpreted());
  for (float v : {3.f, -3.f, 0.f, -0.f})
    EXPECT_EQ(f(Tensor(v)).item<float>(), simple_relu(Tensor(v)).item<float>()) << v;
  const ag::Graph& g = f.concrete_functions()[0].graph();
  const std::string text = ag::graph_to_text(g);
  EXPECT_EQ(count_op(g, ag::OpKind::If), 1u) << text;
  EXPECT_EQ(count_op(g, ag::OpKind::LogicalNot), 0u) << text;
  // The If reads x only, and returns one value: x in one branch, 0 in the other.
  ASSERT_EQ(g.results.size(), 1u);
  const ag::Node& iff = g.producer(g.results[0]);
  EXPECT_EQ(iff.op, ag::OpKind::If);
  EXPECT_EQ(iff.inputs.size(), 2u) << text;
  EXPECT_EQ(iff.outputs.size(), 1u) << text;
}

// The same, on a vector with a reduced condition and work on both paths.
Tensor clipped_norm(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  Tensor n = ag::sqrt(ag::reduce_sum(x * x));
  ag::if_stmt(n < 1.f, [&] { ag__retval = x, ag__do_return = true; }, [&] {}, ag::state(ag__do_return, ag__retval),
              {"ag__do_return", "ag__retval"}, LOC(10));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag__retval = x / n, ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(11));
  return ag__retval;
}

TEST(SimplifyConditionals, ResultsUnchangedOnVectors) {
  auto f = ag::function(clipped_norm, {.input_signature = {ag::TensorSpec({-1}, ag::float32)}, .jit_compile = false});
  for (const Tensor& x : {ag::constant({0.1f, 0.2f}), ag::constant({3.f, 4.f, 12.f}), ag::zeros({0})})
    EXPECT_EQ(f(x).to_vector<float>(), clipped_norm(x).to_vector<float>()) << x.str();
  EXPECT_EQ(count_op(f.concrete_functions()[0].graph(), ag::OpKind::If), 1u) << f.concrete_functions()[0].graph_text();
}

// if (x > 0) { print("positive"); return x; }  print("not positive"); return -x;
Tensor with_prints(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::print("start");
  ag::if_stmt(x > 0, [&] { ag::print("positive"), ag__retval = x, ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(20));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag::print("not positive"), ag__retval = -x, ag__do_return = true; },
              [&] {}, ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(21));
  ag::print("end");
  return ag__retval;
}

TEST(SimplifyConditionals, SideEffectsKeepTheirOrder) {
  auto f = ag::function(with_prints, interpreted());
  std::string eager, graph;
  {
    agtest::PrintCapture prints;
    for (int v : {2, -2}) with_prints(Tensor(v));
    eager = prints.text();
  }
  {
    agtest::PrintCapture prints;
    for (int v : {2, -2}) f(Tensor(v));
    graph = prints.text();
  }
  EXPECT_EQ(graph, "start\npositive\nend\nstart\nnot positive\nend\n");
  EXPECT_EQ(graph, eager);
  EXPECT_EQ(count_op(f.concrete_functions()[0].graph(), ag::OpKind::If), 1u);
}

TEST(SimplifyConditionals, AnEffectBetweenTheIfsPreventsTheMerge) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor ag__retval;
        Tensor ag__do_return = false;
        ag::if_stmt(x > 0, [&] { ag::print("a"), ag__retval = x, ag__do_return = true; }, [&] {},
                    ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(30));
        ag::print("between");
        ag::if_stmt(ag::not_(ag__do_return), [&] { ag::print("b"), ag__retval = -x, ag__do_return = true; }, [&] {},
                    ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(31));
        return ag__retval;
      },
      interpreted());
  agtest::PrintCapture prints;
  EXPECT_EQ(f(Tensor(1)).item<int>(), 1);
  EXPECT_EQ(f(Tensor(-1)).item<int>(), 1);
  EXPECT_EQ(prints.text(), "a\nbetween\nbetween\nb\n");
  const ag::Graph& g = f.concrete_functions()[0].graph();
  EXPECT_EQ(count_op(g, ag::OpKind::If), 2u) << ag::graph_to_text(g);
  EXPECT_EQ(count_op(g, ag::OpKind::LogicalNot), 0u) << ag::graph_to_text(g);  // the flag folded, branches swapped
}

// if (x > 10) return 10; if (x > 0) return x; return 0;
Tensor two_returns(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::if_stmt(x > 10, [&] { ag__retval = Tensor(10), ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(40));
  ag::if_stmt(ag::not_(ag__do_return),
              [&] {
                ag::if_stmt(x > 0, [&] { ag__retval = x, ag__do_return = true; }, [&] {},
                            ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(41));
              },
              [&] {}, ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(41));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag__retval = Tensor(0), ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(42));
  return ag__retval;
}

TEST(SimplifyConditionals, SeveralReturnsStayCorrect) {
  auto f = ag::function(two_returns, interpreted());
  for (int v : {20, 10, 5, 0, -5}) EXPECT_EQ(f(Tensor(v)).item<int>(), two_returns(Tensor(v)).item<int>()) << v;
  const ag::Graph& g = f.concrete_functions()[0].graph();
  // Traced: 4 Ifs. The flag of the first return selects, in each branch of the first If, what
  // the later ones do: if (x > 10) 10 else if (x > 0) x else 0.
  EXPECT_EQ(count_op(g, ag::OpKind::If), 2u) << ag::graph_to_text(g);
  EXPECT_EQ(g.nodes.back().op, ag::OpKind::If) << ag::graph_to_text(g);
}

// if (x > 10) { print("big"); return 10; } if (x > 0) { print("positive"); return x; }
// print("other"); return 0;   with a print after each if too
Tensor returns_with_prints(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::if_stmt(x > 10, [&] { ag::print("big"), ag__retval = Tensor(10), ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(50));
  ag::if_stmt(ag::not_(ag__do_return),
              [&] {
                ag::print("after big");
                ag::if_stmt(x > 0, [&] { ag::print("positive"), ag__retval = x, ag__do_return = true; }, [&] {},
                            ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(51));
              },
              [&] {}, ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(51));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag::print("other"), ag__retval = Tensor(0), ag__do_return = true; },
              [&] {}, ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(52));
  return ag__retval;
}

TEST(SimplifyConditionals, SeveralReturnsWithEffectsBecomeNestedIfs) {
  auto f = ag::function(returns_with_prints, interpreted());
  for (int v : {20, 10, 5, 0, -5}) {
    std::string eager_text, traced_text;
    int want = 0, got = 0;
    {
      agtest::PrintCapture p;
      want = returns_with_prints(Tensor(v)).item<int>();
      eager_text = p.text();
    }
    {
      agtest::PrintCapture p;
      got = f(Tensor(v)).item<int>();
      traced_text = p.text();
    }
    EXPECT_EQ(got, want) << v;
    EXPECT_EQ(traced_text, eager_text) << v;
  }
  const ag::Graph& g = f.concrete_functions()[0].graph();
  EXPECT_EQ(count_op(g, ag::OpKind::If), 2u) << ag::graph_to_text(g);
}

TEST(SimplifyConditionals, NegatedFlagBecomesLogicalNotOfThePredicate) {
  // An If whose bool output is false in `then` and true in `else`.
  auto f = ag::function(
      [](Tensor x) {
        Tensor small = true;
        Tensor y = x;
        ag::if_stmt(x > 5, [&] { small = false, y = x * 2; }, [&] { y = x * 3; }, ag::state(small, y), {"small", "y"},
                    LOC(50));
        return std::tuple{small, y};
      },
      interpreted());
  for (int v : {9, 1}) {
    auto [small, y] = f(Tensor(v));
    EXPECT_EQ(small.item<bool>(), v <= 5);
    EXPECT_EQ(y.item<int>(), v > 5 ? 2 * v : 3 * v);
  }
  const ag::Graph& g = f.concrete_functions()[0].graph();
  ASSERT_EQ(g.results.size(), 2u);
  EXPECT_EQ(g.producer(g.results[0]).op, ag::OpKind::LogicalNot) << ag::graph_to_text(g);
  EXPECT_EQ(g.producer(g.results[1]).outputs.size(), 1u) << ag::graph_to_text(g);  // the If lost its flag output
}

}  // namespace
