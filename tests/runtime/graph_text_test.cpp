// Graph text read back (graph_from_text, ag/graph/parser.h): traced graphs of every kind of op
// print, parse and print again to the same text, and the parsed graph computes what the traced
// one does; malformed text raises ValueError naming the line and column.
#include <cstring>
#include <limits>
#include <string>

#include <ag/detail/variable_state.h>

#include "test_util.h"

namespace {

using ag::Tensor;

// Binds the parsed graph's `var=` attributes to the traced graph's own Variables (by text).
ag::GraphTextVariables same_variables(const ag::Graph& g) {
  auto states = std::make_shared<std::map<std::string, std::shared_ptr<ag::detail::VariableState>>>();
  std::function<void(const ag::Graph&)> collect = [&](const ag::Graph& graph) {
    for (const ag::Node& n : graph.nodes) {
      if (n.attrs.variable) (*states)[n.attrs.variable->describe()] = n.attrs.variable;
      for (const auto& sub : n.subgraphs) collect(*sub);
    }
  };
  collect(g);
  return [states](const std::string& text, ag::DType, const ag::Shape&) {
    auto it = states->find(text);
    return it == states->end() ? nullptr : it->second;
  };
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const size_t bytes = static_cast<size_t>(a.num_elements()) * ag::dtype_size(a.dtype());
  return bytes == 0 || std::memcmp(ag::detail::impl_of(a)->data, ag::detail::impl_of(b)->data, bytes) == 0;
}

// print -> parse -> print gives the same text, and both graphs give the same results.
void expect_round_trip(const ag::Graph& g, const std::vector<Tensor>& args) {
  const std::string text = ag::graph_to_text(g, ag::ConstantText::Full);
  const ag::Graph parsed = ag::graph_from_text(text, same_variables(g));
  EXPECT_EQ(ag::graph_to_text(parsed, ag::ConstantText::Full), text);
  const std::vector<Tensor> want = ag::interpret(g, args), got = ag::interpret(parsed, args);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(same_bits(want[i], got[i])) << "result " << i << ":\n" << text;
}

TEST(GraphTextParser, ElementwiseLayoutAndReductionsRoundTrip) {
  auto f = ag::function(
      [](Tensor x, Tensor idx) {
        Tensor y = ag::transpose(ag::reshape(x, {3, 2}), {1, 0});
        Tensor z = ag::concat({ag::slice(y, {0, 1}, {2, 2}), ag::expand_dims(ag::reduce_sum(y, {1}), 1)}, 1);
        Tensor g = ag::gather(ag::reshape(z, {-1}), idx);
        Tensor m = ag::reduce_max(z, {0}, /*keepdims=*/true);
        Tensor a = ag::cast(ag::argmax(z, 1), ag::float32);
        Tensor w = ag::where(z > 1.5f, ag::exp(z), ag::erf(z) * ag::zeros_like(z) + 0.25f);
        return std::make_tuple(g * 2 + ag::cast(ag::shape_of(x)[0], ag::float32), m, a, ag::squeeze(w + m),
                               ag::cast(ag::range(0, 5, 2), ag::float64) / 3.0, ag::cumsum(z, 1, true, true),
                               ag::cumprod(z, 0), z.at(0, ag::Slice{1}).set(-1.0f));
      },
      {.jit_compile = false, .name = "layout"});
  const Tensor x = ag::constant(std::vector<float>{0.1f, -2.5f, 3.0f, 1e-30f, 7.25f, -0.0f}, {6});
  const Tensor idx = ag::constant(std::vector<int32_t>{5, 0, 3});
  expect_round_trip(f.get_concrete_function(x, idx).graph(), {x, idx});
}

TEST(GraphTextParser, ControlFlowVariablesAndEffectsRoundTrip) {
  ag::Variable v(ag::constant(std::vector<double>{1.5, -2.0}), "v");
  auto f = ag::function(
      [&](Tensor n) {
        auto [i, acc] = ag::while_loop([](const Tensor& i, const Tensor&) { return i < 4; },
                                       [&](const Tensor& i, const Tensor& acc) {
                                         Tensor next = ag::cond(
                                             i % 2 == 0, [&] { return acc + v.value(); },
                                             [&] { return acc * 0.5; });
                                         return std::make_tuple(i + 1, next);
                                       },
                                       std::make_tuple(n, ag::zeros({2}, ag::float64)));
        ag::print("acc:", acc, "i:", i);
        ag::assert_true(ag::reduce_all(acc == acc), "acc \"must\" not be NaN");
        v.assign_add(acc);
        ag::TensorArray ta(ag::float64, 2);
        ta = ta.write(0, acc).write(1, acc * 2.0);
        return ta.stack() + ag::cast(ta.size(), ag::float64);
      },
      {.jit_compile = false, .name = "control"});
  const Tensor n = ag::constant(int32_t{0});
  auto cf = f.get_concrete_function(n);
  // The run mutates v: run the traced and the parsed graph from the same starting value.
  const ag::Graph& g = cf.graph();
  const std::string text = ag::graph_to_text(g, ag::ConstantText::Full);
  const ag::Graph parsed = ag::graph_from_text(text, same_variables(g));
  EXPECT_EQ(ag::graph_to_text(parsed, ag::ConstantText::Full), text);
  EXPECT_NE(text.find("Assert("), std::string::npos) << text;
  EXPECT_NE(text.find("message=\"acc \\\"must\\\" not be NaN\""), std::string::npos) << text;
  const Tensor start = v.value();
  const auto want = ag::interpret(g, {&n, 1});
  const Tensor after_traced = v.value();
  v.assign(start);
  const auto got = ag::interpret(parsed, {&n, 1});
  EXPECT_TRUE(same_bits(want[0], got[0]));
  EXPECT_TRUE(same_bits(after_traced, v.value()));
}

TEST(GraphTextParser, RandomDrawsRoundTripWithFreshState) {
  ag::random::Generator gen(7, "gen");
  auto f = ag::function([&](Tensor x) { return x + gen.uniform({3}, ag::float32, -1, 2) * gen.normal({3}, ag::float32, 0.5, 3); },
                        {.jit_compile = false, .name = "draws"});
  auto cf = f.get_concrete_function(ag::TensorSpec({3}, ag::float32));
  const std::string text = ag::graph_to_text(cf.graph(), ag::ConstantText::Full);
  // Without a resolver, the generator's state is a fresh int64[2] of zeros under the same name.
  const ag::Graph parsed = ag::graph_from_text(text);
  EXPECT_EQ(ag::graph_to_text(parsed, ag::ConstantText::Full), text);
}

TEST(GraphTextParser, ConstantsReadBackBitForBit) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor f32 = ag::constant(std::vector<float>{0.1f, 1e-38f, 3.4028235e38f, -0.0f, nan, -inf, 1.0f / 3});
  const Tensor f64 = ag::constant(std::vector<double>{0.1, 5e-324, -1.0 / 3, 1e300});
  const Tensor i64 = ag::constant(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0, 42});
  const Tensor b = ag::constant({true, false, true});
  const Tensor big = ag::range(0, 2000);  // longer than the short form prints
  for (const Tensor& c : {f32, f64, i64, b, big}) {
    ag::Graph g;
    g.name = "constant";
    ag::Node n;
    n.op = ag::OpKind::Const;
    n.attrs.value = c;
    n.outputs = {ag::TensorType{c.dtype(), c.shape()}};
    g.results.push_back(g.add(std::move(n)));
    const ag::Graph parsed = ag::graph_from_text(ag::graph_to_text(g, ag::ConstantText::Full));
    EXPECT_TRUE(same_bits(parsed.nodes[0].attrs.value, c)) << ag::graph_to_text(g, ag::ConstantText::Full);
    if (c.num_elements() > 100)
      AG_EXPECT_ERROR(ag::ValueError, ag::graph_from_text(ag::graph_to_text(g)), "graph text:2:", "elided",
                      "ConstantText::Full");
  }
}

TEST(GraphTextParser, IdsAreNamesAndCommentsAreSkipped) {
  // Written by hand: ids need not be consecutive; `//` lines are comments.
  const ag::Graph g = ag::graph_from_text(R"(
// a comment
graph hand(%10: f32[2], %3: f32[]) -> (f32[2]) {
  %20 = Mul(%10, %3) : f32[2]
  // another
  %21 = Exp(%20) : f32[2]                    # hand.cpp:7
  return %21
}
)");
  EXPECT_EQ(ag::graph_to_text(g), "graph hand(%1: f32[2], %0: f32[]) -> (f32[2]) {\n"
                                  "  %2 = Mul(%1, %0) : f32[2]\n" +
                                      fmt::format("{:<56}  # hand.cpp:7\n", "  %3 = Exp(%2) : f32[2]") +
                                      "  return %3\n}\n");
  const Tensor x = ag::constant({1.0f, 2.0f}), s = ag::constant(0.5f);
  const Tensor in[] = {x, s};
  agtest::expect_values(ag::interpret(g, in)[0], std::vector<float>{std::exp(0.5f), std::exp(1.0f)}, 1e-6);
}

TEST(GraphTextParser, MalformedTextNamesLineAndColumn) {
  auto parse = [](const std::string& text) { (void)ag::graph_from_text(text); };
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Frobnicate(%0) : f32[2]\n  return %1\n}\n"),
                  "graph text:2:8:", "'Frobnicate' is not an op");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Exp(%7) : f32[2]\n  return %1\n}\n"),
                  "graph text:2:", "%7 is not defined before this line");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Exp(%0) : f33[2]\n  return %1\n}\n"),
                  "graph text:2:", "expected a type");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Exp(%0) : f32[2]\n"), "has no 'return'");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Cast(%0) : i32[2]\n  return %1\n}\n"),
                  "graph text:2:", "Cast needs its 'dtype' attribute");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Exp(%0) {axis=1} : f32[2]\n  return %1\n}\n"),
                  "graph text:2:", "Exp has no attribute 'axis'");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[3]) {\n  %1 = Exp(%0) : f32[2]\n  return %1\n}\n"),
                  "result 0 is declared f32[3] but is f32[2]");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2]) -> (f32[2]) {\n  %1 = Const() {value=[1 2 3]} : f32[2]\n  return %1\n}\n"),
                  "graph text:2:", "the constant has 3 values; its type f32[2] holds 2");
  // Well-formed text whose types break an op's type rule: the verifier's message, as a user error.
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f(%0: f32[2], %1: i32[2]) -> (f32[2]) {\n  %2 = Add(%0, %1) : f32[2]\n  return %2\n}\n"),
                  "graph text: graph verifier");
  AG_EXPECT_ERROR(ag::ValueError, parse("graph f() -> () {\n  return\n}\ngraph g() -> () {\n  return\n}\n"),
                  "expected one graph, found 2");
}

}  // namespace
