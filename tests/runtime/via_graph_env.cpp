// With AG_TEST_EAGER_VIA_GRAPH=1 (the ctest runtime.ops_via_graph), every eager op of these
// tests runs as a one-node graph through the optimizer and the interpreter instead of calling
// its kernel: the op tests then compare the graph path against their reference values, which
// checks the static type rules, the passes and the interpreter too. The mode is installed
// through the runtime's eager-op hook (ag::detail::g_eager_op_hook).
#include <atomic>
#include <cstdlib>
#include <string_view>

#include <ag/ag.h>
#include <ag/backend.h>
#include <ag/detail/ops_internal.h>
#include <ag/graph/passes.h>
#include <gtest/gtest.h>

namespace {

std::atomic<int64_t> g_ops_via_graph{0};

ag::Tensor eval_via_graph(ag::OpKind op, std::span<const ag::Tensor> in, const ag::Attrs& attrs, ag::SourceLoc loc) {
  using namespace ag::detail;
  g_ops_via_graph.fetch_add(1, std::memory_order_relaxed);
  switch (ag::op_class(op)) {
    case ag::OpClass::Stateful:  // side effects and mutable handles are not values of a graph
    case ag::OpClass::List:
    case ag::OpClass::Control: return eval_op(op, in, attrs, loc);
    default: break;
  }
  std::vector<ag::TensorType> types;
  for (const ag::Tensor& t : in) types.push_back(type_of(t));
  if (types.empty() || types[0].dtype == ag::DType::List) return eval_op(op, in, attrs, loc);
  ag::Graph g;
  ag::Node n;
  n.op = op;
  n.attrs = attrs;
  n.loc = loc;
  for (const ag::TensorType& t : types) n.inputs.push_back(g.add_param(t, loc));
  n.outputs = {infer_type(op, types, attrs, loc)};  // the static type rule's errors, as eagerly
  g.results = {g.add(std::move(n))};
  return ag::interpret(ag::optimize(g), in)[0];
}

bool via_graph_requested() {
  const char* e = std::getenv("AG_TEST_EAGER_VIA_GRAPH");
  return e && std::string_view(e) == "1";
}

class EagerViaGraph : public ::testing::Environment {
 public:
  void SetUp() override {
    if (via_graph_requested()) ag::detail::g_eager_op_hook.store(&eval_via_graph);
  }
  void TearDown() override { ag::detail::g_eager_op_hook.store(nullptr); }
};

[[maybe_unused]] ::testing::Environment* const g_env = ::testing::AddGlobalTestEnvironment(new EagerViaGraph);

// The mode is wired: with the variable set, an eager op goes through eval_via_graph.
TEST(EagerViaGraphMode, OpsTakeTheGraphPathExactlyWhenAsked) {
  const int64_t before = g_ops_via_graph.load();
  const ag::Tensor y = ag::constant({1, 2}) * 3 + 1;
  EXPECT_EQ(y.to_vector<int>(), (std::vector<int>{4, 7}));
  EXPECT_EQ(g_ops_via_graph.load() - before, via_graph_requested() ? 2 : 0);
}

}  // namespace
