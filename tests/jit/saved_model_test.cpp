// Saved models on the JIT: a loaded signature compiles (the compile log says so) and agrees
// with the original Function, also in another process that never saw the source (the
// saved_model_loader helper); a training step keeps training the loaded Variables compiled.
#include <ag/saved_model.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "../common/log_capture.h"
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

// The values saved_model_loader printed after "outputs:" are `want` (float32, within 1e-6).
void expect_printed_outputs(const std::string& out, const std::vector<float>& want) {
  const size_t at = out.find("outputs:");
  ASSERT_NE(at, std::string::npos) << out;
  std::istringstream values(out.substr(at + 8));
  for (size_t i = 0; i < want.size(); ++i) {
    float v = 0;
    values >> v;
    EXPECT_NEAR(v, want[i], 1e-6f) << i << ": " << out;
  }
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
  std::string log;
  std::vector<float> here;
  {
    const agtest::LogCapture capture(ag::detail::LogTopic::Compile);
    const ag::saved_model::Module m = ag::saved_model::load(dir);
    here = m.call("predict", {x})[0].to_vector<float>();
    log = capture.text();
  }
  EXPECT_NE(log.find("agc: jit: predict"), std::string::npos) << log;
  ASSERT_EQ(here.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(here[i], want[i], 1e-6f) << i;
  // In another process.
  FILE* p = ::popen(fmt::format("AG_LOG=compile '{}' '{}' predict{} 2>&1", AG_SAVED_MODEL_LOADER, dir, args).c_str(), "r");
  ASSERT_NE(p, nullptr);
  const std::string out = agtest::read_all(p);
  ::pclose(p);
  EXPECT_NE(out.find("agc: jit: predict"), std::string::npos) << out;
  expect_printed_outputs(out, want);
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

// SaveOptions::compiled_for: the directory holds machine code per CPU level, and a program that
// loads it with the JIT links the widest level its CPU runs instead of compiling -- in this
// process and in another one -- with the results and the training of a compiled signature.
TEST(JitSavedModel, SavedCodeIsLinkedNotCompiled) {
  const std::string dir = fresh_dir("objects");
  ag::Variable w(sample(ag::float32, {4, 3}, 3, Values::Moderate), "w");
  auto predict = ag::function([&](Tensor x) {
    const Tensor logits = ag::matmul(x, w.value());
    return ag::cond(ag::reduce_sum(logits) > 0.0f, [&] { return ag::tanh(logits); }, [&] { return logits * 0.5f; });
  });
  auto step = ag::function([&](Tensor x) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::square(ag::matmul(x, w.value())));
    w.assign_sub(tape.gradient(loss, w) * 0.1f);
    return loss;
  });
  // A level that is not one: refused before anything is written.
  EXPECT_THROW(ag::saved_model::save(dir, {{"predict", predict.get_concrete_function(TensorSpec({-1, 4}, ag::float32))}},
                                     {.compiled_for = {"pentium4"}}),
               ag::ValueError);
  EXPECT_FALSE(fs::exists(dir));
  ag::saved_model::save(dir,
                        {{"predict", predict.get_concrete_function(TensorSpec({-1, 4}, ag::float32))},
                         {"step", step.get_concrete_function(TensorSpec({-1, 4}, ag::float32))}},
                        {.compiled_for = {"x86-64-v4", "x86-64-v3", "x86-64-v2"}});
  for (const char* level : {"x86-64-v4", "x86-64-v3", "x86-64-v2"})
    for (const char* name : {"predict", "step"})
      EXPECT_TRUE(fs::exists(fs::path(dir) / "objects" / fmt::format("{}.{}.o", name, level))) << name << " " << level;

  const Tensor x = ag::constant(std::vector<float>{0.5f, -1.0f, 0.25f, 2.0f, -0.5f, 1.5f, 1.0f, -2.0f}, {2, 4});
  const std::vector<float> want = predict(x).to_vector<float>();
  auto capture = std::make_unique<agtest::LogCapture>(ag::detail::LogTopic::Compile);
  const ag::saved_model::Module m = ag::saved_model::load(dir);
  const std::vector<float> here = m.call("predict", {x})[0].to_vector<float>();
  std::vector<float> losses;
  for (int i = 0; i < 3; ++i) {
    const float original = step(x).item<float>();
    const float loaded = m.call("step", {x})[0].item<float>();
    EXPECT_NEAR(loaded, original, 1e-5f * (1 + std::abs(original))) << "step " << i;
    losses.push_back(loaded);
  }
  const std::string log = capture->text();
  capture.reset();
  EXPECT_NE(log.find("agc: jit: predict: linked the saved model's code"), std::string::npos) << log;
  EXPECT_NE(log.find("agc: jit: step: linked the saved model's code"), std::string::npos) << log;
  EXPECT_EQ(log.find("agc: jit: predict: plan + key"), std::string::npos) << "predict was compiled:\n" << log;
  ASSERT_EQ(here.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(here[i], want[i], 1e-6f) << i;
  EXPECT_LT(losses.back(), losses.front());
  const std::vector<float> trained = m.variables()[0].second.value().to_vector<float>(), original = w.value().to_vector<float>();
  for (size_t i = 0; i < trained.size(); ++i) EXPECT_NEAR(trained[i], original[i], 1e-5f) << i;

  // Another process links it too, and the interpreter ignores it.
  std::string args;
  for (float v : std::vector<float>{0.5f, -1.0f, 0.25f, 2.0f}) args += fmt::format(" {}", v);
  FILE* p = ::popen(fmt::format("AG_LOG=compile AG_CACHE_DIR=off '{}' '{}' predict{} 2>&1", AG_SAVED_MODEL_LOADER, dir, args).c_str(), "r");
  ASSERT_NE(p, nullptr);
  const std::string out = agtest::read_all(p);
  ::pclose(p);
  EXPECT_NE(out.find("agc: jit: predict: linked the saved model's code"), std::string::npos) << out;
  EXPECT_EQ(out.find("agc: jit: predict: plan + key"), std::string::npos) << out;
  const Tensor first_row = ag::constant(std::vector<float>{0.5f, -1.0f, 0.25f, 2.0f}, {1, 4});
  const std::vector<float> interpreted =
      ag::saved_model::load(dir, {.jit_compile = false}).call("predict", {first_row})[0].to_vector<float>();
  expect_printed_outputs(out, interpreted);
}

}  // namespace
