// ag_add_aot_library's SOURCES form (test_functions): functions traced and saved by the build
// itself, compiled ahead of time, equal to the same functions run eagerly.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include "functions.h"
#include "test_functions.h"

namespace {

using ag::Tensor;

TEST(AotSourcesForm, EqualsTheFunctionsRunEagerly) {
  for (int64_t n : {1, 6, 27, 97, 871}) {
    const Tensor got = test_functions::collatz_steps(Tensor(n));
    EXPECT_EQ(got.dtype(), ag::int32);  // steps starts as an int
    EXPECT_EQ(got.item<int>(), aot_test::collatz_steps(Tensor(n)).item<int>()) << "collatz_steps(" << n << ")";
  }
  EXPECT_EQ(test_functions::collatz_steps(Tensor(int64_t{27})).item<int>(), 111);
  EXPECT_FALSE(test_functions::selected_cpu("collatz_steps").empty());
  // Both branches of the tensor if: a batch inside the limit (unchanged) and one beyond it.
  for (float scale : {0.5f, 4.0f}) {
    const Tensor x = ag::random_uniform({5, 3}, ag::float32, -scale, scale, 9);
    const Tensor limit(1.5f);
    const Tensor got = test_functions::soft_clamp(x, limit), want = aot_test::soft_clamp(x, limit);
    const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-6f) << "scale " << scale << ", element " << i;
  }
  // The signature the FUNCTIONS entry declared: [-1, 3] takes any batch, not another width.
  EXPECT_THROW(test_functions::soft_clamp(ag::zeros({2, 4}), Tensor(1.0f)), ag::ValueError);
}

// A staged loop of products by weights it does not change: compiled ahead of time, B packed before
// the loop, the eager result bit for bit (the packed products are Eigen's).
TEST(AotSourcesForm, ALoopOfProductsByTheSameWeightsHasTheEagerBits) {
  const Tensor xs = ag::random_uniform({4, 16, 48}, ag::float32, -1, 1, 3), w = ag::random_uniform({48, 64}, ag::float32, -0.2, 0.2, 4),
               u = ag::random_uniform({64, 64}, ag::float32, -0.1, 0.1, 5);
  const std::vector<float> got = test_functions::rnn_final_state(xs, w, u).to_vector<float>(),
                           want = aot_test::rnn_final_state(xs, w, u).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got, want);
}

}  // namespace
