// Saved models on the JIT: a loaded signature compiles (the compile log says so) and agrees
// with the original Function, also in another process that never saw the source (the
// saved_model_loader helper); a training step keeps training the loaded Variables compiled.
#include <ag/saved_model.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <sstream>

#include "helper_process.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

namespace fs = std::filesystem;
using ag::Tensor;
using ag::TensorSpec;
using agtest::sample;
using agtest::Values;

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / fmt::format("agc_jit_saved_model_{}_{}", name, ::getpid());
  fs::remove_all(p);
  return p.string();
}

TEST(JitSavedModel, LoadedSignaturesCompileAndAgreeInAnotherProcess) {
  const std::string dir = fresh_dir("cnn");
  ag::Variable k(sample(ag::float32, {3, 3, 1, 2}, 1, Values::Moderate), "kernel");
  ag::Variable dense(sample(ag::float32, {8, 3}, 2, Values::Moderate), "dense");
  auto predict = ag::function([&](Tensor x) {
    const Tensor images = ag::reshape(x, {-1, 4, 4, 1});
    const Tensor h = ag::nn::max_pool2d(ag::relu(ag::nn::conv2d(images, k.value(), 1, "SAME")), 2, 2, "VALID");
    const Tensor logits = ag::matmul(ag::reshape(h, {-1, 8}), dense.value());
    return ag::nn::softmax(ag::cond(ag::reduce_sum(logits) > 0.0f, [&] { return logits * 2.0f; }, [&] { return logits; }));
  });
  ag::saved_model::save(dir, {{"predict", predict.get_concrete_function(TensorSpec({-1, 16}, ag::float32))}});

  std::vector<float> input(16);
  std::string args;
  for (size_t i = 0; i < input.size(); ++i) {
    input[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
    args += fmt::format(" {}", input[i]);
  }
  const Tensor x = ag::constant(input, {1, 16});
  const std::vector<float> want = predict(x).to_vector<float>();
  // In this process, compiled (the log shows the compile).
  std::mutex mu;
  std::string log;
  ag::detail::set_log_topics(static_cast<unsigned>(ag::detail::LogTopic::Compile));
  ag::set_log_sink([&](std::string_view line) {
    const std::lock_guard lock(mu);
    log += std::string(line) + "\n";
  });
  const ag::saved_model::Module m = ag::saved_model::load(dir);
  const std::vector<float> here = m.call("predict", {x})[0].to_vector<float>();
  ag::set_log_sink(nullptr);
  ag::detail::set_log_topics(0);
  EXPECT_NE(log.find("agc: jit: predict"), std::string::npos) << log;
  ASSERT_EQ(here.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(here[i], want[i], 1e-6f) << i;
  // In another process.
  FILE* p = ::popen(fmt::format("AG_LOG=compile '{}' '{}' predict{} 2>&1", AG_SAVED_MODEL_LOADER, dir, args).c_str(), "r");
  ASSERT_NE(p, nullptr);
  const std::string out = agtest::read_all(p);
  ::pclose(p);
  EXPECT_NE(out.find("agc: jit: predict"), std::string::npos) << out;
  const size_t at = out.find("outputs:");
  ASSERT_NE(at, std::string::npos) << out;
  std::istringstream values(out.substr(at + 8));
  for (size_t i = 0; i < want.size(); ++i) {
    float v = 0;
    values >> v;
    EXPECT_NEAR(v, want[i], 1e-6f) << i << ": " << out;
  }
}

TEST(JitSavedModel, ALoadedTrainingStepTrainsCompiled) {
  const std::string dir = fresh_dir("train");
  ag::Variable w(ag::constant({{0.5, -0.25}, {0.75, 0.5}}), "w");
  auto step = ag::function([&](Tensor x, Tensor y) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::square(ag::matmul(x, w.value()) - y));
    w.assign_sub(tape.gradient(loss, w) * 0.2);
    return loss;
  });
  ag::saved_model::save(dir, {{"step", step.get_concrete_function(TensorSpec({-1, 2}, ag::float64), TensorSpec({-1, 2}, ag::float64))}});
  const ag::saved_model::Module m = ag::saved_model::load(dir);
  const Tensor x = ag::constant({{1.0, 2.0}, {0.5, -1.0}}), y = ag::constant({{1.0, 0.0}, {0.0, 1.0}});
  std::vector<double> losses;
  for (int i = 0; i < 4; ++i) {
    const double original = step(x, y).item<double>();
    const double loaded = m.call("step", {x, y})[0].item<double>();
    EXPECT_NEAR(loaded, original, 1e-12) << "step " << i;
    losses.push_back(loaded);
  }
  EXPECT_LT(losses.back(), losses.front());
  EXPECT_EQ(m.variables()[0].second.value().to_vector<double>(), w.value().to_vector<double>());
}

}  // namespace
