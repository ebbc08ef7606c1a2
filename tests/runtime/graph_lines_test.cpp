// Graph lines point at the user: nodes that library code makes on the user's behalf (an
// optimizer's update, a gradient rule's backward ops) carry the user's line that called into the
// library, never agc's own source file.
#include <regex>
#include <set>

#include "test_util.h"

namespace {

using ag::Tensor;

// The files named by the "# file.cpp:N" labels of a graph's text.
std::set<std::string> labelled_files(const std::string& text) {
  std::set<std::string> files;
  static const std::regex label("# ([A-Za-z0-9_]+\\.(cpp|h)):[0-9]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), label); it != std::sregex_iterator(); ++it)
    files.insert((*it)[1]);
  return files;
}

TEST(GraphLines, OptimizerUpdatesAndGradientsCarryTheUsersLines) {
  for (bool adam : {false, true}) {
    ag::optimizers::Adam adam_opt(0.1);
    ag::optimizers::SGD sgd_opt(0.1, 0.9);
    ag::Variable w(ag::constant({1.0f, 2.0f}), "w");
    int apply_line = 0;
    auto f = ag::function(
        [&](Tensor x) {
          ag::GradientTape tape;
          Tensor loss = ag::reduce_sum(ag::square(w * x) + ag::exp(ag::tanh(x * w)));
          Tensor g = tape.gradient(loss, w);
          apply_line = __LINE__ + 1;
          adam ? adam_opt.apply_gradients({{g, &w}}) : sgd_opt.apply_gradients({{g, &w}});
          return loss;
        },
        {.jit_compile = false});
    const Tensor x = ag::constant({2.0f, 3.0f});
    f(x);
    const std::string text = f.get_concrete_function(x).graph_text();
    EXPECT_EQ(labelled_files(text), std::set<std::string>{"graph_lines_test.cpp"}) << text;
    // The update's assignments name the apply_gradients line.
    const std::regex assign_at("Assign[A-Za-z]*Variable[^\\n]*var=variable .w.[^\\n]*# graph_lines_test\\.cpp:" + std::to_string(apply_line));
    EXPECT_TRUE(std::regex_search(text, assign_at)) << text;
  }
}

TEST(GraphLines, TheUpdateStillRunsEagerlyAndTracedAlike) {
  auto run = [](bool traced) {
    ag::optimizers::Adam opt(0.1);
    ag::Variable w(ag::constant({1.0f, -2.0f}), "w");
    auto step = [&](Tensor x) {
      ag::GradientTape tape;
      Tensor loss = ag::reduce_sum(ag::square(w * x - 1.f));
      opt.apply_gradients({{tape.gradient(loss, w), &w}});
      return loss;
    };
    auto f = ag::function(step, {.jit_compile = false});
    for (int k = 0; k < 3; ++k) traced ? f(ag::constant({0.5f, 2.0f})) : step(ag::constant({0.5f, 2.0f}));
    return w.value();
  };
  agtest::expect_values(run(true), run(false).to_vector<float>(), 1e-6, 1e-6);
}

}  // namespace
