// Graph IR: the stable text form and DOT (goldens), the passes, the verifier.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <ag/detail/memory_stats.h>
#include <ag/detail/ops_internal.h>
#include <ag/graph/passes.h>
#include <ag/graph/verifier.h>

#include "test_util.h"

namespace {

using agtest::count_op;
using ag::Tensor;

#define LOC(line) AG_SOURCE_LOC("g.cpp", line)

constexpr int kSimpleLine = __LINE__ + 1;
Tensor simple(Tensor x, Tensor w, Tensor b) { return ag::relu(ag::matmul(x, w) + b); }

// A node line of the golden: the text padded to column 56, then the location comment.
std::string line(const std::string& text, int src_line) {
  return fmt::format("{:<56}  # graph_test.cpp:{}\n", text, src_line);
}

TEST(GraphText, Golden) {
  auto f = ag::function(simple, {.jit_compile = false, .name = "simple"});
  auto cf = f.get_concrete_function(ag::TensorSpec({-1, 2}, ag::float32), ag::TensorSpec({2, 3}, ag::float32),
                                    ag::TensorSpec({3}, ag::float32));
  const std::string expected = "graph simple(%0: f32[?,2], %1: f32[2,3], %2: f32[3]) -> (f32[?,3]) {\n" +
                               line("  %3 = MatMul(%0, %1) : f32[?,3]", kSimpleLine) +
                               line("  %4 = Add(%3, %2) : f32[?,3]", kSimpleLine) +
                               line("  %5 = Relu(%4) : f32[?,3]", kSimpleLine) + "  return %5\n}\n";
  EXPECT_EQ(cf.graph_text(), expected);
  EXPECT_EQ(cf.signature(),
            "simple(arg0: TensorSpec(shape=(None, 2), dtype=float32), arg1: TensorSpec(shape=(2, 3), dtype=float32), "
            "arg2: TensorSpec(shape=(3,), dtype=float32)) -> TensorSpec(shape=(None, 3), dtype=float32)");
}

TEST(GraphText, DotGolden) {
  auto f = ag::function([](Tensor x) { return ag::exp(x) * 2.f; }, {.jit_compile = false, .name = "g"});
  auto cf = f.get_concrete_function(ag::TensorSpec({2}, ag::float32));
  const std::string expected =
      "digraph \"g\" {\n"
      "  node [fontname=\"monospace\"];\n"
      "  n0 [label=\"Placeholder arg0\\nf32[2]\", shape=invhouse];\n"
      "  n1 [label=\"Exp\\nf32[2]\", shape=box];\n"
      "  n0 -> n1;\n"
      "  n2 [label=\"Const\\n{value=2}\\nf32[]\", shape=note];\n"
      "  n3 [label=\"Mul\\nf32[2]\", shape=box];\n"
      "  n1 -> n3;\n"
      "  n2 -> n3;\n"
      "  ret [label=\"return\", shape=house];\n"
      "  n3 -> ret;\n"
      "}\n";
  EXPECT_EQ(cf.graph_dot(), expected);
}

TEST(GraphText, ControlFlowNestsSubgraphs) {
  auto f = ag::function(
      [](Tensor n) {
        Tensor s = 0;
        ag::while_stmt([&] { return n > 0; },
                       [&] {
                         ag::if_stmt(n % 2 == 0, [&] { s += n; }, [] {}, ag::state(s), {"s"}, LOC(2));
                         n -= 1;
                       },
                       ag::state(n, s), {"n", "s"}, LOC(1));
        return s;
      },
      {.jit_compile = false, .name = "evens"});
  auto cf = f.get_concrete_function(ag::TensorSpec({}, ag::int32));
  const std::string text = cf.graph_text();
  EXPECT_NE(text.find("%2:2 = While(%0, %1) {loop_vars=2} : (i32[], i32[])"), std::string::npos) << text;
  EXPECT_NE(text.find("    cond (%0: i32[], %1: i32[]) -> (i1[]) {"), std::string::npos) << text;
  EXPECT_NE(text.find("    body (%0: i32[], %1: i32[]) -> (i32[], i32[]) {"), std::string::npos) << text;
  EXPECT_NE(text.find("If("), std::string::npos) << text;
  EXPECT_NE(text.find("# g.cpp:1"), std::string::npos) << text;
  EXPECT_NE(text.find("  return %2#1\n"), std::string::npos) << text;
  EXPECT_EQ(f(Tensor(6)).item<int>(), 12);
}

ag::Graph traced_graph(ag::Function<Tensor(Tensor)>& f, const ag::TensorSpec& spec) {
  auto cf = f.get_concrete_function(spec);
  return cf.graph();
}

TEST(Passes, ConstantFoldingAndCse) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor k = ag::constant({1.f, 2.f});  // concrete: computed while tracing
        Tensor a = ag::exp(x) + ag::exp(x);   // CSE merges the two exps
        return a * k;
      },
      {.jit_compile = false});
  const ag::Graph g = traced_graph(f, ag::TensorSpec({2}, ag::float32));
  EXPECT_EQ(count_op(g, ag::OpKind::Exp), 1u);
  EXPECT_EQ(f(ag::constant({0.f, 0.f})).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
}

TEST(Passes, AlgebraicSimplificationIsExact) {
  auto f = ag::function([](Tensor x) { return (x * 1.f - 0.f) / 1.f + 0.f; }, {.jit_compile = false});
  const ag::Graph g = traced_graph(f, ag::TensorSpec({3}, ag::float32));
  EXPECT_EQ(count_op(g, ag::OpKind::Mul) + count_op(g, ag::OpKind::Sub) + count_op(g, ag::OpKind::Div), 0u)
      << ag::graph_to_text(g);
  EXPECT_EQ(count_op(g, ag::OpKind::Add), 1u) << "x + 0.0 is not x for x = -0.0";
  auto i = ag::function([](Tensor x) { return x + 0; }, {.jit_compile = false});
  EXPECT_EQ(count_op(traced_graph(i, ag::TensorSpec({3}, ag::int32)), ag::OpKind::Add), 0u);
  Tensor negzero = ag::constant({-0.f});
  EXPECT_TRUE(std::signbit(f(ag::constant({-0.f, 1.f, 2.f})).to_vector<float>()[0]) ==
              std::signbit((negzero + 0.f).item<float>()));
}

TEST(Passes, PruningKeepsSideEffectsInOrder) {
  agtest::PrintCapture prints;
  ag::Variable v(Tensor(0));
  auto f = ag::function(
      [&](Tensor x) {
        Tensor unused = ag::exp(ag::cast(x, ag::float32));
        (void)unused;
        ag::print("first");
        v.assign_add(x);
        ag::print("second", v.value());
        return x;
      },
      {.jit_compile = false});
  f(Tensor(5));
  const ag::Graph& g = f.concrete_functions()[0].graph();
  EXPECT_EQ(count_op(g, ag::OpKind::Exp), 0u);
  EXPECT_EQ(count_op(g, ag::OpKind::Print), 2u);
  EXPECT_EQ(prints.text(), "first\nsecond 5\n");
}

TEST(Passes, IfOnAConstantConditionIsInlined) {
  auto f = ag::function(
      [](Tensor x) {
        Tensor flag = true;  // concrete: the if runs natively while tracing anyway
        Tensor y = x;
        ag::if_stmt(flag, [&] { y = x * 2; }, [&] { y = x * 3; }, ag::state(y), {"y"}, LOC(10));
        return y;
      },
      {.jit_compile = false});
  const ag::Graph g = traced_graph(f, ag::TensorSpec({}, ag::int32));
  EXPECT_EQ(count_op(g, ag::OpKind::If), 0u);
  // Built by hand: an If on a Const condition.
  ag::Graph h;
  ag::ValueId p = h.add_param({ag::int32, {}});
  ag::Node c;
  c.op = ag::OpKind::Const;
  c.attrs.value = Tensor(true);
  c.outputs = {{ag::bool_, {}}};
  ag::ValueId cv = h.add(c);
  auto branch = [](ag::OpKind op) {
    auto g = std::make_shared<ag::Graph>();
    ag::ValueId a = g->add_param({ag::int32, {}});
    ag::Node n;
    n.op = op;
    n.inputs = {a};
    n.outputs = {{ag::int32, {}}};
    g->results = {g->add(n)};
    return g;
  };
  ag::Node iff;
  iff.op = ag::OpKind::If;
  iff.inputs = {cv, p};
  iff.outputs = {{ag::int32, {}}};
  iff.subgraphs = {branch(ag::OpKind::Neg), branch(ag::OpKind::Abs)};
  h.results = {h.add(iff)};
  ag::verify_graph(h);
  const ag::Graph s = ag::simplify_algebra(h);
  EXPECT_EQ(count_op(s, ag::OpKind::If), 0u);
  EXPECT_EQ(count_op(s, ag::OpKind::Neg), 1u);
  EXPECT_EQ(count_op(s, ag::OpKind::Abs), 0u);
  EXPECT_EQ(ag::interpret(s, std::vector<Tensor>{Tensor(4)})[0].item<int>(), -4);
}

TEST(Passes, FoldingLeavesFailingNodesForRunTime) {
  ag::Graph h;
  ag::ValueId p = h.add_param({ag::int32, {}});
  auto konst = [&](Tensor v) {
    ag::Node c;
    c.op = ag::OpKind::Const;
    c.outputs = {ag::detail::type_of(v)};
    c.attrs.value = v;
    return h.add(c);
  };
  ag::Node div;
  div.op = ag::OpKind::Div;
  div.inputs = {konst(Tensor(1)), konst(Tensor(0))};
  div.outputs = {{ag::int32, {}}};
  ag::ValueId bad = h.add(div);
  ag::Node add;
  add.op = ag::OpKind::Add;
  add.inputs = {p, bad};
  add.outputs = {{ag::int32, {}}};
  h.results = {h.add(add)};
  const ag::Graph g = ag::fold_constants(h);
  EXPECT_EQ(count_op(g, ag::OpKind::Div), 1u);
  agtest::expect_error<ag::InvalidArgumentError>([&] { ag::interpret(g, std::vector<Tensor>{Tensor(1)}); },
                                                 {"division by zero"});
}

// A node of `op` on `inputs` with the given output type, appended to `g`.
ag::ValueId add_node(ag::Graph& g, ag::OpKind op, std::vector<ag::ValueId> inputs, ag::TensorType type) {
  ag::Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = {std::move(type)};
  return g.add(n);
}

ag::ValueId add_const(ag::Graph& g, Tensor v) {
  ag::Node c;
  c.op = ag::OpKind::Const;
  c.outputs = {ag::detail::type_of(v)};
  c.attrs.value = v;
  return g.add(c);
}

TEST(Passes, ShapeInferenceRefinesTypes) {
  // Types as tracing may leave them: a result joined to an unknown dim whose producer is known.
  ag::Graph h;
  const ag::ValueId p = h.add_param({ag::float32, {3}});
  const ag::ValueId e = add_node(h, ag::OpKind::Exp, {p}, {ag::float32, {-1}});
  const ag::ValueId m = add_node(h, ag::OpKind::Mul, {e, add_const(h, Tensor(2.f))}, {ag::float32, {-1}});
  h.results = {m};
  ag::verify_graph(h);
  const ag::Graph g = ag::infer_shapes(h);
  EXPECT_EQ(g.type(g.results[0]).str(), "f32[3]") << ag::graph_to_text(g);
  EXPECT_EQ(g.nodes[1].outputs[0].str(), "f32[3]");
  // A dim the inputs cannot tell stays as it was.
  ag::Graph u;
  const ag::ValueId q = u.add_param({ag::float32, {-1}});
  u.results = {add_node(u, ag::OpKind::Exp, {q}, {ag::float32, {-1}})};
  EXPECT_EQ(ag::infer_shapes(u).type(u.results[0]).str(), "f32[?]");

  // Through the pipeline: ag::cond with a constant predicate joins [3] and [6] into [?]; once the
  // If is inlined, shape inference makes the rest of the graph [3] again.
  auto f = ag::function(
      [](Tensor x) {
        Tensor y = ag::cond(Tensor(true), [&] { return x; }, [&] { return ag::concat({x, x}, 0); });
        return ag::exp(y) * 2.f;
      },
      {.jit_compile = false});
  const ag::Graph opt = traced_graph(f, ag::TensorSpec({3}, ag::float32));
  EXPECT_EQ(count_op(opt, ag::OpKind::If), 0u);
  EXPECT_EQ(opt.type(opt.results[0]).str(), "f32[3]") << ag::graph_to_text(opt);
  EXPECT_EQ(ag::graph_to_text(opt).find('?'), std::string::npos) << ag::graph_to_text(opt);
}

TEST(Passes, ConstantFoldingReplacesConstantOpsByTheirValue) {
  ag::Graph h;
  const ag::ValueId p = h.add_param({ag::int32, {2}});
  const ag::ValueId two = add_const(h, ag::constant({2, 3}));
  const ag::ValueId three = add_const(h, Tensor(3));
  const ag::ValueId sum = add_node(h, ag::OpKind::Mul, {two, three}, {ag::int32, {2}});
  h.results = {add_node(h, ag::OpKind::Add, {p, sum}, {ag::int32, {2}})};
  const ag::Graph g = ag::fold_constants(h);
  const std::string text = ag::graph_to_text(g);
  EXPECT_EQ(count_op(g, ag::OpKind::Mul), 0u) << text;
  EXPECT_EQ(count_op(g, ag::OpKind::Add), 1u) << text;
  EXPECT_NE(text.find("Const() {value=[6 9]} : i32[2]"), std::string::npos) << text;
  EXPECT_EQ(ag::interpret(g, std::vector<Tensor>{ag::constant({1, 1})})[0].to_vector<int>(), (std::vector<int>{7, 10}));

  // Traced: an op on an If result that becomes constant once the If on a constant predicate is
  // inlined (Mul(If, 5) -> Mul(3, 5) -> 15).
  auto f = ag::function(
      [](Tensor x) { return x + ag::cond(Tensor(true), [] { return Tensor(3); }, [] { return Tensor(4); }) * 5; },
      {.jit_compile = false});
  const ag::Graph t = traced_graph(f, ag::TensorSpec({}, ag::int32));
  EXPECT_EQ(count_op(t, ag::OpKind::Mul), 0u) << ag::graph_to_text(t);
  EXPECT_NE(ag::graph_to_text(t).find("{value=15}"), std::string::npos) << ag::graph_to_text(t);
  EXPECT_EQ(f(Tensor(1)).item<int>(), 16);
}

TEST(Interpreter, ReleasesValuesAfterTheirLastUse) {
  constexpr int64_t n = 1 << 20;  // 4 MB of float32: the pooled allocator, which counts bytes
  constexpr size_t buffer = size_t{4} << 20;
  auto chain = [](Tensor x) {
    Tensor y = x;
    for (int k = 0; k < 12; ++k) y = ag::sin(y) + static_cast<float>(k + 1);  // 24 nodes, 4 MB each
    return y;
  };
  auto f = ag::function(chain, {.jit_compile = false});
  const Tensor x = ag::random_uniform({n}, ag::float32, -1, 1, 7);
  (void)f(x);  // traces
  const size_t before = ag::detail::pool_stats().live_bytes;
  ag::detail::reset_pool_peak();
  const Tensor out = f(x);
  const size_t peak = ag::detail::pool_stats().peak_live_bytes - before;
  // A node's input lives until the node has run, so two buffers at once; never all 24.
  EXPECT_LE(peak, 2 * buffer) << "peak " << peak / buffer << " buffers";
  EXPECT_GE(peak, buffer);  // the measurement sees the result's buffer
  EXPECT_EQ(out.to_vector<float>(), chain(x).to_vector<float>());
}

TEST(Verifier, RejectsMalformedGraphs) {
  ag::Graph h;
  ag::ValueId p = h.add_param({ag::float32, {2}});
  ag::Node n;
  n.op = ag::OpKind::Exp;
  n.inputs = {p};
  n.outputs = {{ag::int32, {2}}};  // wrong dtype
  h.results = {h.add(n)};
  EXPECT_THROW(ag::verify_graph(h), ag::InternalError);
  h.nodes[1].outputs = {{ag::float32, {2}}};
  EXPECT_NO_THROW(ag::verify_graph(h));
  h.nodes[1].inputs = {{5, 0}};  // a later node
  EXPECT_THROW(ag::verify_graph(h), ag::InternalError);
}

TEST(Dump, WritesGraphsAfterEachPass) {
  // Per process: ctest runs this binary in several processes at once (runtime.ops_via_graph,
  // runtime.kernels_*), and two of them once removed each other's files.
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("agc_dump_test." + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  ag::detail::set_dump_dir(dir);
  auto f = ag::function([](Tensor x) { return x * 1.f + 2.f; }, {.jit_compile = false, .name = "dumped"});
  f(Tensor(1.f));
  ag::detail::set_dump_dir("");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  auto has = [&](const std::string& suffix) {
    for (const auto& n : names)
      if (n.starts_with("dumped.") && n.ends_with(suffix)) return true;
    return false;
  };
  EXPECT_TRUE(has(".00-traced.graph.txt"));
  EXPECT_TRUE(has("-prune.graph.txt"));
  EXPECT_TRUE(has(".graph.txt"));
  EXPECT_TRUE(has(".dot"));
  std::filesystem::remove_all(dir);
}

}  // namespace

// Integer (a + c) - c and floordiv(a, 1) are a (the trip count of a staged for over ag::range
// computes both); for floats (a + c) - c rounds, and stays.
TEST(Passes, SimplifyCancelsIntegerAddSubAndFloorDivByOne) {
  auto int_fn = ag::function([](Tensor x) { return ag::floordiv((x + 3) - 3, 1) * 2; }, agtest::interpreted());
  EXPECT_EQ(int_fn(ag::constant({5, -7})).to_vector<int>(), (std::vector<int>{10, -14}));
  const std::string text = int_fn.concrete_functions()[0].graph_text();
  EXPECT_EQ(text.find("Sub("), std::string::npos) << text;
  EXPECT_EQ(text.find("FloorDiv("), std::string::npos) << text;
  EXPECT_EQ(text.find("Add("), std::string::npos) << text;
  auto float_fn = ag::function([](Tensor x) { return (x + 3.0f) - 3.0f; }, agtest::interpreted());
  EXPECT_EQ(float_fn(ag::constant({1e-8f})).to_vector<float>(), (std::vector<float>{(1e-8f + 3.0f) - 3.0f}));
  EXPECT_NE(float_fn.concrete_functions()[0].graph_text().find("Sub("), std::string::npos);
}
