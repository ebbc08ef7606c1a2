// ag::saved_model on the interpreter: a model and a training step saved and loaded (the loaded
// Variables are fresh and keep training; the originals are untouched), control flow and a
// random generator's state, every error a user can make, and a fuzzed loader (a damaged file is
// a ValueError, never a crash or an internal error).
#include <gtest/gtest.h>
#include <ag/ag.h>
#include <ag/saved_model.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ag/detail/saved_model_files.h"

#include "../common/expect_error.h"

namespace {

namespace fs = std::filesystem;
using ag::Tensor;
using ag::TensorSpec;

using agtest::expect_error;

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / fmt::format("agc_saved_model_{}_{}", name, ::getpid());
  fs::remove_all(p);
  return p.string();
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes; }

void expect_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape());
    EXPECT_EQ(a[i].to_vector<double>(), b[i].to_vector<double>()) << "output " << i;
  }
}

// A two-layer model with its weights in Variables, and a training step that updates them.
struct Weights {
  ag::Variable w1{ag::constant({{0.5f, -0.25f, 0.125f}, {0.75f, 0.5f, -1.0f}}), "w1"};
  ag::Variable w2{ag::constant({{1.0f}, {-0.5f}, {0.25f}}), "w2"};
};

Tensor forward(Weights& w, const Tensor& x) { return ag::matmul(ag::tanh(ag::matmul(x, w.w1.value())), w.w2.value()); }

auto make_predict(Weights& w) {
  return ag::function([&w](Tensor x) { return forward(w, x); }, {.jit_compile = false});
}

auto make_train_step(Weights& w) {
  return ag::function(
      [&w](Tensor x, Tensor y) {
        ag::GradientTape tape;
        const Tensor loss = ag::reduce_mean(ag::square(forward(w, x) - y));
        const auto g = tape.gradient(loss, std::vector<ag::GradSource>{w.w1, w.w2});
        w.w1.assign_sub(g[0] * 0.1f);
        w.w2.assign_sub(g[1] * 0.1f);
        return loss;
      },
      {.jit_compile = false});
}

struct Model {
  Weights w;
  decltype(make_predict(w)) predict = make_predict(w);
  decltype(make_train_step(w)) train_step = make_train_step(w);
  ag::Variable& w1 = w.w1;
  ag::Variable& w2 = w.w2;
};

TEST(SavedModel, ATrainingStepKeepsTrainingItsOwnVariables) {
  const std::string dir = fresh_dir("train");
  Model model;
  const Tensor x = ag::constant({{1.0f, 2.0f}, {-1.0f, 0.5f}, {0.0f, 1.0f}}), y = ag::constant({{1.0f}, {0.0f}, {-1.0f}});
  ag::saved_model::save(dir, {{"predict", model.predict.get_concrete_function(TensorSpec({-1, 2}, ag::float32))},
                              {"train_step", model.train_step.get_concrete_function(TensorSpec({-1, 2}, ag::float32),
                                                                                    TensorSpec({-1, 1}, ag::float32))}});
  const ag::saved_model::Module m = ag::saved_model::load(dir, {.jit_compile = false});
  // The signatures and Variables as saved.
  const std::vector<ag::saved_model::Signature> sigs = m.signatures();
  ASSERT_EQ(sigs.size(), 2u);
  EXPECT_EQ(sigs[0].name, "predict");
  EXPECT_EQ(sigs[0].inputs, (std::vector<TensorSpec>{TensorSpec({-1, 2}, ag::float32)}));
  EXPECT_EQ(sigs[0].outputs, (std::vector<TensorSpec>{TensorSpec({-1, 1}, ag::float32)}));
  EXPECT_EQ(sigs[1].inputs.size(), 2u);
  const auto vars = m.variables();
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0].first, "w1");
  EXPECT_EQ(vars[1].first, "w2");
  EXPECT_EQ(vars[0].second.value().to_vector<float>(), model.w1.value().to_vector<float>());
  EXPECT_NE(vars[0].second.state(), model.w1.state());
  // Loaded and original agree, step by step; the loaded steps move only the loaded Variables.
  expect_equal(m.call("predict", {x}), {model.predict(x)});
  for (int step = 0; step < 3; ++step) expect_equal(m.call("train_step", {x, y}), {model.train_step(x, y)});
  EXPECT_EQ(vars[0].second.value().to_vector<float>(), model.w1.value().to_vector<float>());
  EXPECT_EQ(vars[1].second.value().to_vector<float>(), model.w2.value().to_vector<float>());
  const std::vector<float> before = model.w1.value().to_vector<float>();
  m.call("train_step", {x, y});
  EXPECT_EQ(model.w1.value().to_vector<float>(), before);
  EXPECT_NE(vars[0].second.value().to_vector<float>(), before);
  // Another batch size fits the saved signature.
  EXPECT_EQ(m.call("predict", {ag::ones({5, 2}, ag::float32)})[0].shape(), (ag::Shape{5, 1}));
}

TEST(SavedModel, ControlFlowAndARandomGeneratorsState) {
  const std::string dir = fresh_dir("control");
  ag::random::Generator gen(7, "noise");
  auto f = ag::function(
      [&](Tensor x, Tensor n) {
        Tensor i = ag::constant(0);
        auto [k, acc] = ag::while_loop([](const Tensor& k, const Tensor&) { return k < 4; },
                                       [&](const Tensor& k, const Tensor& acc) {
                                         return std::make_tuple(k + 1, ag::cond(k % 2 == 0, [&] { return acc * 2.0; },
                                                                                [&] { return acc + x; }));
                                       },
                                       std::make_tuple(i, x));
        return std::make_tuple(acc + ag::cast(n, ag::float64), gen.normal({3}, ag::float64));
      },
      {.jit_compile = false});
  const Tensor x = ag::constant(std::vector<double>{1.5, -2.0}), n = ag::constant(3);
  ag::saved_model::save(dir, {{"f", f.get_concrete_function(x, n)}});
  const ag::saved_model::Module m = ag::saved_model::load(dir, {.jit_compile = false});
  // The loaded generator continues from the saved state: the same draws as the original's next.
  for (int call = 0; call < 2; ++call) {
    const auto [acc, draw] = f(x, n);
    const std::vector<Tensor> got = m.call("f", {x, n});
    expect_equal(got, {acc, draw});
  }
}

TEST(SavedModel, UserErrorsAreClear) {
  const std::string dir = fresh_dir("errors");
  Model model;
  auto predict = model.predict.get_concrete_function(TensorSpec({-1, 2}, ag::float32));
  expect_error<ag::ValueError>([&] { ag::saved_model::save(dir, {{"my model", predict}}); }, {"'my model' is not a signature name"});
  expect_error<ag::ValueError>([&] { ag::saved_model::save(dir, {{"a", predict}, {"a", predict}}); }, {"the name 'a' is given twice"});
  ag::Variable twin(ag::constant({{1.0f}, {2.0f}, {3.0f}}), "w2");
  auto twins = ag::function([&](Tensor x) { return ag::matmul(x, twin.value()) + model.predict(ag::slice(x, {0, 0}, {-1, 2})); },
                            {.jit_compile = false});
  expect_error<ag::ValueError>([&] { ag::saved_model::save(dir, {{"t", twins.get_concrete_function(TensorSpec({1, 3}, ag::float32))}}); },
                               {"two different variables are both variable 'w2' (float32[3,1]): give one another name"});
  expect_error<ag::ValueError>([&] { ag::saved_model::load(dir + "/nowhere"); }, {"no saved model in", "saved_model.txt is missing"});
  ag::saved_model::save(dir, {{"predict", predict}});
  const ag::saved_model::Module m = ag::saved_model::load(dir, {.jit_compile = false});
  expect_error<ag::ValueError>([&] { m.call("serve", {}); }, {"no signature 'serve'; the module has: predict"});
  expect_error<ag::TypeError>([&] { m.call("predict", {ag::ones({1, 2}, ag::float64)}); },
                              {"'predict' input 0 must be TensorSpec(shape=(None, 2), dtype=float32)", "got float64"});
  expect_error<ag::ValueError>([&] { m.call("predict", {ag::ones({1, 3}, ag::float32)}); }, {"got shape [1,3]"});
  expect_error<ag::ValueError>([&] { m.call("predict", {}); }, {"'predict' takes 1 inputs, got 0"});
}

TEST(SavedModel, CompiledCodeNeedsTheJit) {
  const std::string dir = fresh_dir("no_jit_objects");
  Model model;
  expect_error<ag::Error>(
      [&] {
        ag::saved_model::save(dir, {{"predict", model.predict.get_concrete_function(TensorSpec({-1, 2}, ag::float32))}},
                              {.compiled_for = {"x86-64-v2"}});
      },
      {"compiled_for needs the JIT", "link agc::agc"});
  EXPECT_FALSE(fs::exists(fs::path(dir) / "saved_model.txt"));
}

TEST(SavedModel, AnotherVersionOrADamagedFileIsRefused) {
  const std::string dir = fresh_dir("damaged");
  Model model;
  ag::saved_model::save(dir, {{"predict", model.predict.get_concrete_function(TensorSpec({-1, 2}, ag::float32))}});
  const fs::path manifest = fs::path(dir) / "saved_model.txt", graph = fs::path(dir) / "graphs" / "predict.graph";
  const std::string good_manifest = read(manifest), good_graph = read(graph);
  // The manifest names the release that wrote it, and a refusal says which it was.
  EXPECT_NE(good_manifest.find("\nwriter agc " AG_TEST_VERSION "\n"), std::string::npos) << good_manifest;
  std::string other = good_manifest;
  other.replace(other.find(" 1\n"), 3, " 2\n");
  other.replace(other.find("writer agc "), 11, "writer agc 9.");
  write(manifest, other);
  expect_error<ag::ValueError>([&] { ag::saved_model::load(dir); },
                               {"saved in format version 2 by agc 9." AG_TEST_VERSION "; this agc (" AG_TEST_VERSION ") reads version 1"});
  write(manifest, good_manifest);
  write(graph, good_graph.substr(0, good_graph.size() / 2));
  expect_error<ag::ValueError>([&] { ag::saved_model::load(dir); }, {"predict.graph is damaged or was altered"});
  std::string altered = good_graph;
  altered[altered.find("Tanh")] = 'S';
  write(graph, altered);
  expect_error<ag::ValueError>([&] { ag::saved_model::load(dir); }, {"predict.graph is damaged or was altered"});
  write(graph, good_graph);
  EXPECT_NO_THROW(ag::saved_model::load(dir));
  // A manifest (with its own checksum right) that names a file outside the model: refused
  // before that file is read.
  ag::saved_model::detail::Manifest m = ag::saved_model::detail::parse_manifest(good_manifest, "test");
  m.files[0].path = "../outside.graph";
  write(manifest, ag::saved_model::detail::manifest_text(m));
  expect_error<ag::ValueError>([&] { ag::saved_model::load(dir); }, {"names a file outside the model: ../outside.graph"});
  write(manifest, good_manifest);
}

// Every byte of every file flipped or cut, and the graphs mutated with their checksums made to
// match (so the graph parser itself sees the damage): load raises ag::Error or loads a model
// that runs; it never crashes and never raises an internal error.
TEST(SavedModel, FuzzedFilesNeverCrashTheLoader) {
  const std::string dir = fresh_dir("fuzz");
  Model model;
  ag::saved_model::save(dir, {{"predict", model.predict.get_concrete_function(TensorSpec({-1, 2}, ag::float32))},
                              {"train_step", model.train_step.get_concrete_function(TensorSpec({-1, 2}, ag::float32),
                                                                                    TensorSpec({-1, 1}, ag::float32))}});
  const fs::path manifest = fs::path(dir) / "saved_model.txt";
  const std::string good_manifest = read(manifest);
  const std::vector<std::string> files = {"saved_model.txt", "variables.graph", "graphs/predict.graph", "graphs/train_step.graph"};
  std::mt19937 rng(11);
  int refused = 0, loaded = 0;
  auto try_load = [&] {
    try {
      const ag::saved_model::Module m = ag::saved_model::load(dir, {.jit_compile = false});
      for (const ag::saved_model::Signature& s : m.signatures()) {
        std::vector<Tensor> ins;
        for (const TensorSpec& spec : s.inputs) {
          ag::Shape shape;
          for (int64_t d : spec.shape()) shape.push_back(d < 0 ? 2 : d);
          ins.push_back(ag::zeros(shape, spec.dtype()));
        }
        try {
          m.call(s.name, ins);
        } catch (const ag::Error&) {
        }
      }
      ++loaded;
    } catch (const ag::Error&) {
      ++refused;
    }
  };
  for (const std::string& name : files) {
    const fs::path p = fs::path(dir) / name;
    const std::string good = read(p);
    for (int trial = 0; trial < 60; ++trial) {
      std::string bad = good;
      const size_t at = rng() % bad.size();
      if (trial % 3 == 0) bad.resize(at);
      else bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
      write(p, bad);
      if (name != "saved_model.txt" && trial % 2 == 1) {
        // Make the manifest agree with the damaged file.
        ag::saved_model::detail::Manifest m = ag::saved_model::detail::parse_manifest(good_manifest, "test");
        for (auto& f : m.files)
          if (f.path == name) {
            f.size = bad.size();
            f.checksum = ag::saved_model::detail::checksum(bad);
          }
        write(manifest, ag::saved_model::detail::manifest_text(m));
      }
      try_load();
      write(manifest, good_manifest);
    }
    write(p, good);
  }
  EXPECT_GT(refused, 100);
  RecordProperty("loaded", loaded);
}

}  // namespace
