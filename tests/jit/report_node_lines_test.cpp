// The JIT's IR and assembly mapped to graph nodes (the HTML report's links): the mapped text is
// the text llvm_ir() and assembly() print (differential: the inspection build's line info
// changes nothing else), every line has an entry, and the nodes that emit code own lines.
#include <sstream>

#include "function/concrete.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

size_t lines_of(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n + (!s.empty() && s.back() != '\n');
}

// The lines mapped to the node graph_to_dot names `key` ("n3", "n2s1_n4").
size_t owned_by(const ag::Executable::MappedText& t, const std::string& key) {
  size_t n = 0;
  for (int32_t k : t.line_nodes) n += k >= 0 && static_cast<size_t>(k) < t.node_keys.size() && t.node_keys[k] == key;
  return n;
}
size_t owned_by(const ag::Executable::MappedText& t, uint32_t top_level_node) {
  return owned_by(t, "n" + std::to_string(top_level_node));
}

void expect_mapped_like_plain(const ag::detail::ConcreteCore& core_const, const char* what) {
  auto& core = const_cast<ag::detail::ConcreteCore&>(core_const);
  const ag::Executable& exe = core.compiled_executable();
  for (bool optimized : {false, true}) {
    const ag::Executable::MappedText m = exe.llvm_ir_mapped(optimized);
    EXPECT_EQ(m.text, exe.llvm_ir(optimized)) << what << (optimized ? " (optimized IR)" : " (IR)");
    EXPECT_EQ(m.line_nodes.size(), lines_of(m.text)) << what;
    for (int32_t k : m.line_nodes)
      if (k >= 0) {
        ASSERT_LT(static_cast<size_t>(k), m.node_keys.size()) << what;
        EXPECT_FALSE(m.node_keys[static_cast<size_t>(k)].empty()) << what;
      }
  }
  const ag::Executable::MappedText a = exe.assembly_mapped();
  EXPECT_EQ(a.text, exe.assembly()) << what << " (assembly)";
  EXPECT_EQ(a.line_nodes.size(), lines_of(a.text)) << what;
}

TEST(ReportNodeLines, MatMulAndAFusedChainOwnTheirLines) {
  auto f = ag::function([](Tensor x, Tensor w) { return ag::tanh(ag::matmul(x, w) * 2.f + 1.f); });
  auto c = f.get_concrete_function(ag::TensorSpec({64, 32}, ag::float32), ag::TensorSpec({32, 16}, ag::float32));
  expect_mapped_like_plain(*c.core(), "matmul + chain");
  const ag::Graph& g = c.graph();
  const ag::Executable& exe = c.core()->compiled_executable();
  const auto ir = exe.llvm_ir_mapped(false), opt = exe.llvm_ir_mapped(true), as = exe.assembly_mapped();
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op == ag::OpKind::MatMul) {
      EXPECT_GT(owned_by(ir, i), 0u) << "MatMul %" << i << " in the IR";
      EXPECT_GT(owned_by(as, i), 0u) << "MatMul %" << i << " in the assembly";
    }
    if (g.nodes[i].op == ag::OpKind::Placeholder) EXPECT_EQ(owned_by(ir, i), 0u);
  }
  // The fused loop (tanh of the scaled product) belongs to its group's root, the last node.
  const uint32_t root = g.results[0].node;
  EXPECT_GT(owned_by(opt, root), 0u);
  EXPECT_GT(owned_by(as, root), 0u);
}

TEST(ReportNodeLines, ControlFlowAndParallelLoopsStillMatchThePlainText) {
  auto loop = ag::function([](Tensor n) {
    auto [k, s] = ag::while_loop([](const Tensor& i, const Tensor&) { return i < 10; },
                                 [](const Tensor& i, const Tensor& acc) { return std::tuple{i + 1, acc * 2 + i}; },
                                 std::tuple{Tensor(0), n});
    (void)k;
    return ag::cond(s > 100, [&] { return s - 100; }, [&] { return s; });
  });
  auto c = loop.get_concrete_function(Tensor(3));
  expect_mapped_like_plain(*c.core(), "while + cond");
  // Nodes inside the While's body own their lines, under their sub-graph name.
  const ag::Graph& g = c.graph();
  const auto ir = c.core()->compiled_executable().llvm_ir_mapped(false);
  size_t inside = 0;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != ag::OpKind::While) continue;
    const ag::Graph& body = *g.nodes[i].subgraphs[1];
    for (uint32_t j = 0; j < body.nodes.size(); ++j)
      if (body.nodes[j].op == ag::OpKind::Mul) inside += owned_by(ir, "n" + std::to_string(i) + "s1_n" + std::to_string(j));
  }
  EXPECT_GT(inside, 0u) << "the body's Mul has no IR lines";
  // Large enough to be split across the thread pool (an outlined worker function).
  auto big = ag::function([](Tensor x) { return ag::exp(x) + x * x; });
  expect_mapped_like_plain(*big.get_concrete_function(ag::TensorSpec({1 << 20}, ag::float32)).core(), "parallel loop");
}

}  // namespace
