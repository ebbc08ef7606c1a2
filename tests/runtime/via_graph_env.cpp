// With AG_TEST_EAGER_VIA_GRAPH=1 (the ctest runtime.ops_via_graph), every eager op of these
// tests runs as a one-node graph through the optimizer and the interpreter instead of calling
// its kernel: the op tests then compare the graph path against their reference values.
#include <cstdlib>
#include <string_view>

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

}  // namespace
