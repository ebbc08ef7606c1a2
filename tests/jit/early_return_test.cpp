// Early returns (as ag-rewrite lowers them: a do_return flag and guarded Ifs) after the
// conditional simplifications: one If for `if (c) return a; return b;`, and the same results
// eagerly, on the interpreter and in compiled code.
#include "jit_test_util.h"

namespace {

using ag::Tensor;

#define LOC(line) AG_SOURCE_LOC("early_return.cpp", line)

size_t count_ifs(const ag::Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes) {
    n += node.op == ag::OpKind::If;
    for (const auto& sub : node.subgraphs) n += count_ifs(*sub);
  }
  return n;
}

// if (reduce_sum(x) > 0) return x * 2; return -x;
Tensor double_or_negate(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::if_stmt(ag::reduce_sum(x) > 0.f, [&] { ag__retval = x * 2.f, ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(1));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag__retval = -x, ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(2));
  return ag__retval;
}

// if (x > 10) return 10; if (x > 0) return x; return 0;   (integers: bit-exact)
Tensor clamp_returns(Tensor x) {
  Tensor ag__retval;
  Tensor ag__do_return = false;
  ag::if_stmt(x > 10, [&] { ag__retval = Tensor(10), ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(10));
  ag::if_stmt(ag::not_(ag__do_return),
              [&] {
                ag::if_stmt(x > 0, [&] { ag__retval = x, ag__do_return = true; }, [&] {},
                            ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(11));
              },
              [&] {}, ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(11));
  ag::if_stmt(ag::not_(ag__do_return), [&] { ag__retval = Tensor(0), ag__do_return = true; }, [&] {},
              ag::state(ag__do_return, ag__retval), {"ag__do_return", "ag__retval"}, LOC(12));
  return ag__retval;
}

TEST(JitEarlyReturn, OneIfAndThreeWayAgreement) {
  for (const Tensor& x : {ag::constant({1.f, -0.5f, 2.f}), ag::constant({-1.f, 0.5f}), ag::zeros({0})})
    agtest::expect_three_way("double_or_negate " + x.str(), double_or_negate, {}, x);
  auto jit = ag::function(double_or_negate);
  const auto cf = jit.get_concrete_function(ag::TensorSpec({3}, ag::float32));
  EXPECT_EQ(count_ifs(cf.graph()), 1u) << cf.graph_text();
  agtest::expect_same(double_or_negate(ag::constant({-4.f, 1.f, 2.f})), cf(ag::constant({-4.f, 1.f, 2.f})), {}, "cf");
}

TEST(JitEarlyReturn, SeveralReturnsAgree) {
  for (int v : {20, 11, 10, 5, 0, -5}) agtest::expect_three_way("clamp_returns " + std::to_string(v), clamp_returns, {}, Tensor(v));
  auto jit = ag::function(clamp_returns);
  EXPECT_LT(count_ifs(jit.get_concrete_function(ag::TensorSpec({}, ag::int32)).graph()), 4u);  // traced: 4
}

}  // namespace
