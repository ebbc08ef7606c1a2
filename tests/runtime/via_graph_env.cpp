// With AG_TEST_EAGER_VIA_GRAPH=1 (the ctest runtime.ops_via_graph), every eager op of these
// tests runs as a one-node graph through the optimizer and the interpreter instead of calling
// its kernel: the op tests then compare the graph path against their reference values. The
// hook lives in runtime_tests' own copy of apply_op.cpp (see CMakeLists.txt).
#include <cstdlib>
#include <string_view>

#include <ag/ag.h>
#include <ag/detail/ops_internal.h>
#include <gtest/gtest.h>

namespace {

class EagerViaGraph : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* e = std::getenv("AG_TEST_EAGER_VIA_GRAPH");
    if (e && std::string_view(e) == "1") ag::detail::set_eager_via_graph(true);
  }
  void TearDown() override { ag::detail::set_eager_via_graph(false); }
};

[[maybe_unused]] ::testing::Environment* const g_env = ::testing::AddGlobalTestEnvironment(new EagerViaGraph);

// The mode is wired: with the variable set, an eager op goes through eval_via_graph.
TEST(EagerViaGraphMode, OpsTakeTheGraphPathExactlyWhenAsked) {
  const char* e = std::getenv("AG_TEST_EAGER_VIA_GRAPH");
  const bool on = e && std::string_view(e) == "1";
  const int64_t before = ag::detail::ops_run_via_graph();
  const ag::Tensor y = ag::constant({1, 2}) * 3 + 1;
  EXPECT_EQ(y.to_vector<int>(), (std::vector<int>{4, 7}));
  EXPECT_EQ(ag::detail::ops_run_via_graph() - before, on ? 2 : 0);
}

}  // namespace
