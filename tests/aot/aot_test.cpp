// A program linking a saved model compiled ahead of time (test_model, ag_add_aot_library) with
// agc::jit_core and agc::runtime only: the compiled code runs (its log line, the level this CPU
// has), without LLVM in the process, and gives what the graph interpreter gives on the same
// saved model -- also when it trains its own Variables and when it must report bad data.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_model.h"

namespace {

using ag::Tensor;

// The level ag::aot picks: the widest of x86-64-v4/-v3/-v2 whose features this CPU has.
std::string expected_level() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd"))
    return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
      __builtin_cpu_supports("f16c") && __builtin_cpu_supports("movbe"))
    return "x86-64-v3";
  return "x86-64-v2";
}

// Every log line of the process: the library logs which level each signature runs when it
// loads, on the first call of any of its functions (AG_LOG=compile, set by the test).
std::vector<std::string>& log_lines() {
  static std::vector<std::string> lines;
  return lines;
}
const bool log_captured = [] {
  ag::set_log_sink([](std::string_view line) { log_lines().emplace_back(line); });
  return true;
}();

const ag::saved_model::Module& interpreted() {
  static const ag::saved_model::Module m = ag::saved_model::load(AG_AOT_MODEL_DIR, {.jit_compile = false});
  return m;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const Tensor g = ag::cast(got, ag::float64), w = ag::cast(want, ag::float64);
  const std::vector<double> gv = g.to_vector<double>(), wv = w.to_vector<double>();
  for (size_t i = 0; i < gv.size(); ++i)
    EXPECT_NEAR(gv[i], wv[i], 1e-5 * (1 + std::abs(wv[i]))) << what << " element " << i;
}

TEST(AotLibrary, RunsWithoutLlvmInTheProcess) {
  EXPECT_FALSE(ag::jit_available());
  (void)test_model::collatz(Tensor(27));
  std::ifstream maps("/proc/self/maps");
  std::stringstream s;
  s << maps.rdbuf();
  EXPECT_EQ(s.str().find("libLLVM"), std::string::npos) << "libLLVM is mapped into an AOT program";
}

TEST(AotLibrary, RunsTheCodeOfTheWidestLevelThisCpuHas) {
  const Tensor probs = test_model::predict(ag::random_uniform({3, 4}, ag::float32, -1, 1, 5));
  ASSERT_TRUE(log_captured);
  EXPECT_EQ(test_model::selected_cpu("predict"), expected_level());
  EXPECT_EQ(test_model::selected_cpu("no_such_signature"), "");
  bool ran = false;
  for (const std::string& line : log_lines())
    ran |= line == "agc: aot: test_model: 'predict' runs the code compiled ahead of time for " + expected_level() + "\n";
  EXPECT_TRUE(ran) << "no log line says the compiled code runs (AG_LOG=compile)";
  expect_close(ag::reduce_sum(probs, 1), ag::ones({3}), "softmax rows sum to 1");
}

TEST(AotLibrary, EqualsTheInterpreterOnEverySignature) {
  for (int64_t batch : {1, 7, 64}) {
    const Tensor x = ag::random_uniform({batch, 4}, ag::float32, -2, 2, static_cast<uint64_t>(batch));
    expect_close(test_model::predict(x), interpreted().call("predict", {x})[0], "predict, batch " + std::to_string(batch));
  }
  for (int n : {1, 6, 27, 97, 871}) {
    const Tensor got = test_model::collatz(Tensor(n));
    EXPECT_EQ(got.item<int>(), interpreted().call("collatz", {Tensor(n)})[0].item<int>()) << "collatz(" << n << ")";
  }
  EXPECT_EQ(test_model::collatz(Tensor(27)).item<int>(), 111);
  // A Function nested in another, in a staged loop.
  const Tensor x = ag::random_uniform({5, 4}, ag::float32, -1, 1, 21);
  for (int steps : {0, 3}) {
    expect_close(test_model::refine(x, Tensor(steps)), interpreted().call("refine", {x, Tensor(steps)})[0],
                 "refine, " + std::to_string(steps) + " steps");
  }
  const Tensor table = ag::constant(std::vector<double>{0.5, 1.5, 2.5, 3.5, 4.5});
  const Tensor idx = ag::constant(std::vector<int64_t>{4, 0, 2, 2});
  expect_close(test_model::lookup(table, idx), interpreted().call("lookup", {table, idx})[0], "lookup");
  const Tensor v = ag::random_normal({1000}, ag::float64, 0, 1, 3);
  const std::vector<Tensor> m = test_model::moments(v), want = interpreted().call("moments", {v});
  ASSERT_EQ(m.size(), 2u);
  expect_close(m[0], want[0], "mean");
  expect_close(m[1], want[1], "max");
}

TEST(AotLibrary, TrainsItsOwnVariablesAsTheInterpreterDoes) {
  const ag::saved_model::Module fresh = ag::saved_model::load(AG_AOT_MODEL_DIR, {.jit_compile = false});
  const Tensor x = ag::random_uniform({32, 4}, ag::float32, -1, 1, 11);
  const Tensor labels = ag::one_hot(ag::constant(std::vector<int64_t>(32, 1)), 3);
  auto named = [](const ag::saved_model::Module& m, const std::string& name) {
    for (const auto& [n, v] : m.variables())
      if (n == name) return v;
    throw std::runtime_error("no variable " + name);
  };
  const Tensor before = named(test_model::module(), "w1").value();
  for (int step = 0; step < 5; ++step) {
    const Tensor got = test_model::train_step(x, labels), want = fresh.call("train_step", {x, labels})[0];
    expect_close(got, want, "loss at step " + std::to_string(step));
  }
  // The four weights, and the optimizer's step counter, which is a Variable too.
  const auto trained = test_model::module().variables(), reference = fresh.variables();
  ASSERT_EQ(trained.size(), reference.size());
  for (size_t k = 0; k < trained.size(); ++k) {
    EXPECT_EQ(trained[k].first, reference[k].first);
    expect_close(trained[k].second.value(), reference[k].second.value(), "variable " + trained[k].first);
  }
  for (const char* w : {"w1", "b1", "w2", "b2"}) EXPECT_NO_THROW(named(test_model::module(), w)) << w;
  EXPECT_GT(ag::reduce_max(ag::abs(named(test_model::module(), "w1").value() - before)).item<float>(), 0.0f)
      << "w1 did not train";
}

TEST(AotLibrary, BadInputsAndBadDataAreErrorsNotCrashes) {
  const Tensor table = ag::constant(std::vector<double>{0.5, 1.5, 2.5, 3.5, 4.5});
  try {
    test_model::lookup(table, ag::constant(std::vector<int64_t>{1, 7}));
    ADD_FAILURE() << "an index out of range was not reported";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(test_model::lookup(ag::cast(table, ag::float32), ag::constant(std::vector<int64_t>{1})), ag::TypeError);
  EXPECT_THROW(test_model::predict(ag::zeros({2, 5})), ag::ValueError);
  // The code still runs after the errors.
  EXPECT_EQ(test_model::collatz(Tensor(6)).item<int>(), 8);
}

}  // namespace
