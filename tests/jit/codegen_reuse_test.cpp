// One code generation pipeline per TargetMachine, run module after module (object_emitter.h).
// Checked: the objects a reused pipeline emits are, byte for byte, those of a pipeline built for
// each module (AG_JIT_REUSE_CODEGEN=0), for thirty random programs (elementwise chains, reductions,
// matmuls, slices, gathers, If and While), split modules on two threads and unsplit ones, at
// every optimization level; the reuse ran (counters); the values stay eager == JIT.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "engine.h"
#include "random_program.h"

namespace {

namespace fs = std::filesystem;
using ag::Tensor;

Tensor power(const Tensor& x) {
  Tensor r = x;
  for (int i = 0; i < 30; ++i) r = ag::matmul(x, r);
  return r;
}

// Compiles every program (fresh Functions) into a new disk cache at `dir`; returns its entries.
std::map<std::string, std::string> compile_into(const fs::path& dir, const std::vector<uint64_t>& seeds) {
  fs::remove_all(dir);
  const agtest::ScopedEnv cache("AG_CACHE_DIR", dir.c_str());
  const Tensor a = ag::random_uniform({3, 4}, ag::float32, -1, 1, 1), b = ag::random_uniform({4}, ag::float32, -1, 1, 2);
  const Tensor n = ag::random_uniform({3, 4}, ag::int32, 0, 7, 3);
  for (const uint64_t seed : seeds) {
    const agtest::Program program(seed);
    auto f = ag::function([program](Tensor x, Tensor y, Tensor k) { return program.run(x, y, k); });
    const Tensor compiled = f(a, b, n);
    EXPECT_EQ(f.stats().compiles, 1) << "seed " << seed;
    EXPECT_TRUE(agtest::same_tensor(program.run(a, b, n), compiled, {.rtol = 1e-4, .atol = 1e-5})) << "seed " << seed;
  }
  auto f = ag::function(power);  // a split module: its kernel compiles as a second module
  f(ag::random_uniform({10, 10}, ag::int32, -2, 3, 4));
  std::map<std::string, std::string> entries;
  if (!fs::exists(dir)) return entries;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    entries[e.path().filename().string()].assign(std::istreambuf_iterator<char>(in), {});
  }
  fs::remove_all(dir);
  return entries;
}

TEST(CodegenReuse, ObjectsAreThoseOfAPipelineBuiltForEachModule) {
  const fs::path base = fs::temp_directory_path() / ("agc-codegen-reuse-" + std::to_string(::getpid()));
  std::vector<uint64_t> seeds;
  for (uint64_t s = 0; s < 30; ++s) seeds.push_back(7000 + s);
  for (const char* level : {"2", "0", "3"}) {
    const agtest::ScopedEnv opt("AG_JIT_OPT", level);
    for (const int threads : {2, 1}) {
      const ag::detail::ScopedNumThreads scoped(threads);
      const int64_t reused_before = ag::jit::Engine::reused_codegen_runs();
      // A directory per run: the disk cache keeps the ones it has opened.
      const std::string run = std::string("O") + level + "-" + std::to_string(threads) + "-";
      const std::map<std::string, std::string> reused = compile_into(base / (run + "reused"), seeds);
      EXPECT_GT(ag::jit::Engine::reused_codegen_runs() - reused_before, static_cast<int64_t>(seeds.size()) / 2);
      std::map<std::string, std::string> fresh;
      {
        const agtest::ScopedEnv once("AG_JIT_REUSE_CODEGEN", "0");
        const int64_t runs_before = ag::jit::Engine::reused_codegen_runs();
        fresh = compile_into(base / (run + "fresh"), seeds);
        EXPECT_EQ(ag::jit::Engine::reused_codegen_runs(), runs_before);  // no pipeline ran twice
      }
      ASSERT_GE(reused.size(), seeds.size() / 2) << "AG_JIT_OPT=" << level;  // distinct programs
      ASSERT_EQ(reused.size(), fresh.size()) << "AG_JIT_OPT=" << level;
      for (const auto& [name, object] : reused) {
        const auto other = fresh.find(name);
        ASSERT_NE(other, fresh.end()) << name;
        EXPECT_TRUE(object == other->second) << "AG_JIT_OPT=" << level << ", " << threads << " threads: " << name
                                             << " differs (" << object.size() << " vs " << other->second.size() << " bytes)";
      }
    }
  }
  std::filesystem::remove_all(base);
}

}  // namespace
