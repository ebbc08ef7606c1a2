// The disk-cache key covers everything that changes generated code: each setting the JIT reads
// while compiling (JitConfig), changed alone, misses the entry compiled without it and makes
// one of its own; the op table and the ABI headers are among the files hashed into every key.
// The target in the key is the engine's, which a compile reads before it has the engine.
#include <filesystem>
#include <string>

#include "graph_key.h"
#include "jit_config.h"
#include "jit_test_util.h"
#include "../common/scoped_env.h"

namespace {

using ag::Tensor;

// An elementwise chain large enough that the streaming-store bar can apply to its result.
Tensor chain(Tensor x) { return ag::tanh(x * 1.5f + 0.25f) * x; }

struct CacheDir {
  CacheDir() : path(std::filesystem::temp_directory_path() / ("agc-key-inputs-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
  }
  ~CacheDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// Compiles chain in a new Function: {compiles, disk hits}.
std::pair<int64_t, int64_t> compile_once(const Tensor& x) {
  auto f = ag::function(chain);
  EXPECT_TRUE(agtest::same_tensor(chain(x), f(x), {1e-6, 1e-6}));
  return {f.stats().compiles, f.stats().disk_hits};
}

TEST(CacheKeyInputs, EachSettingMissesTheEntryCompiledWithoutIt) {
  if (!ag::jit_available()) GTEST_SKIP() << "no JIT";
  const CacheDir dir;
  const agtest::ScopedEnv cache("AG_CACHE_DIR", dir.path.c_str());
  const Tensor x = ag::random_normal({512, 1024}, ag::float32, 0, 1, /*seed=*/3);  // 2 MB
  ASSERT_EQ(compile_once(x), std::make_pair(int64_t{1}, int64_t{0}));
  ASSERT_EQ(compile_once(x), std::make_pair(int64_t{0}, int64_t{1})) << "the default settings hit";
  const std::pair<const char*, const char*> settings[] = {
      {"AG_JIT_OPT", "1"},          {"AG_JIT_ROLL", "1"},        {"AG_JIT_VECTOR_LOOPS", "0"},
      {"AG_JIT_SPLIT", "0"},        {"AG_NONTEMPORAL", "4096"},  {"AG_NONTEMPORAL", "0"},
      {"AG_JIT_PACK_WEIGHTS", "0"},
  };
  for (const auto& [name, value] : settings) {
    const agtest::ScopedEnv changed(name, value);
    EXPECT_EQ(compile_once(x), std::make_pair(int64_t{1}, int64_t{0})) << name << "=" << value << " loaded other code";
    EXPECT_EQ(compile_once(x), std::make_pair(int64_t{0}, int64_t{1})) << name << "=" << value << " has an entry of its own";
  }
  EXPECT_EQ(compile_once(x), std::make_pair(int64_t{0}, int64_t{1})) << "back to the defaults: their entry";
}

// A compile keys its entry with the target an engine created now would have, before it waits
// for the engine (the warm-up thread may be creating it); the engine of a process is made once,
// so AG_JIT_CPU changed later does not change the code: the key is then the engine's again.
TEST(CacheKeyInputs, TheTargetInTheKeyIsTheEnginesOnceItExists) {
  if (!ag::jit_available()) GTEST_SKIP() << "no JIT";
  const CacheDir dir;
  const agtest::ScopedEnv cache("AG_CACHE_DIR", dir.path.c_str());
  const Tensor x = ag::random_normal({64, 64}, ag::float32, 0, 1, /*seed=*/4);
  ASSERT_EQ(compile_once(x), std::make_pair(int64_t{1}, int64_t{0}));
  {
    const agtest::ScopedEnv other("AG_JIT_CPU", "x86-64");  // not this engine's target at any level ctest runs
    EXPECT_EQ(compile_once(x), std::make_pair(int64_t{0}, int64_t{1})) << "keyed with a target the code was not compiled for";
  }
  {
    const agtest::ScopedEnv bad("AG_JIT_CPU", "not-a-cpu");
    auto f = ag::function(chain);
    try {
      (void)f(x);
      ADD_FAILURE() << "a bad AG_JIT_CPU was accepted";
    } catch (const ag::InternalError& e) {
      ADD_FAILURE() << "an internal error for a user's setting: " << e.what();
    } catch (const ag::Error& e) {
      EXPECT_NE(std::string(e.what()).find("AG_JIT_CPU=not-a-cpu"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(compile_once(x), std::make_pair(int64_t{0}, int64_t{1}));
}

TEST(CacheKeyInputs, TheKeyNamesEverySettingAndTheHashCoversTheOpTableAndTheAbi) {
  const ag::jit::JitConfig c = ag::jit::JitConfig::from_environment();
  const std::string key = c.key();
  for (const char* part : {"O2", "roll=auto", "vector_loops=true", "split=true", "pack=true", "nontemporal=-1", "llc=", "kernels="})
    EXPECT_NE(key.find(part), std::string::npos) << key << " lacks " << part;
  {
    const agtest::ScopedEnv bad("AG_JIT_ROLL", "sometimes");
    EXPECT_THROW(ag::jit::JitConfig::from_environment(), ag::ValueError);
  }
  const std::string files(ag::jit::hashed_source_files());
  for (const char* f : {" ops.def ", " graph.h ", " op.h ", " attrs.h ", " tensor_impl.h ", " variable_state.h ",
                        " lower_layout.cpp ", " jit_config.cpp "})
    EXPECT_NE(files.find(f), std::string::npos) << "not hashed into the disk-cache key:" << f;
}

}  // namespace
