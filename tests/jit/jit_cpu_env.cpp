// ctest runs jit_tests again with AG_JIT_CPU set to narrower x86-64 levels than the host. A level
// with features this CPU lacks is reported as skipped (the runtime's own message, which names
// them); any other error with the setting fails.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "jit_test_util.h"

namespace {

class JitCpuLevel : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* cpu = std::getenv("AG_JIT_CPU");
    if (!cpu || !*cpu) return;
    try {
      std::printf("JIT code for %s\n", ag::jit_target_cpu().c_str());
    } catch (const ag::Error& e) {
      const std::string msg = e.what();
      std::printf("%s%s\n", msg.find(" lacks ") != std::string::npos ? "SKIPPED: " : "", msg.c_str());
      std::exit(msg.find(" lacks ") != std::string::npos ? 0 : 1);
    }
  }
};

[[maybe_unused]] ::testing::Environment* const g_env = ::testing::AddGlobalTestEnvironment(new JitCpuLevel);

// The JIT is linked, and generates code for the CPU asked for (or the host's).
TEST(JitTarget, CodeIsGeneratedForTheRequestedCpu) {
  EXPECT_TRUE(ag::jit_available());
  const char* cpu = std::getenv("AG_JIT_CPU");
  if (!cpu || !*cpu || std::string(cpu) == "host") {
    EXPECT_FALSE(ag::jit_target_cpu().empty());
    return;
  }
  EXPECT_EQ(ag::jit_target_cpu(), cpu);
  // The vector registers of the level, and none wider: SSE's xmm for v2, AVX2's ymm for v3.
  auto f = ag::function([](ag::Tensor x) { return x * 2.f + 1.f; });
  const std::string text = f.get_concrete_function(ag::ones({1024})).assembly();
  const bool ymm = text.find("%ymm") != std::string::npos, zmm = text.find("%zmm") != std::string::npos;
  if (std::string(cpu) == "x86-64-v2") {
    EXPECT_NE(text.find("%xmm"), std::string::npos) << text;
    EXPECT_FALSE(ymm || zmm) << text;
  }
  if (std::string(cpu) == "x86-64-v3") {
    EXPECT_TRUE(ymm) << text;
    EXPECT_FALSE(zmm) << text;
  }
}

// Small static tensors are vectorized by the SLP vectorizer, which takes a vector-math variant
// for any width the library table offers: the table must offer only what the target can run.
// (x86-64-v2 code once called the 8-wide AVX2 sinf with its vector split over two SSE
// registers: wrong values on an AVX2 machine, an illegal instruction on an SSE one.)
TEST(JitTarget, VectorMathCallsFitTheTarget) {
  const std::string cpu = ag::jit_target_cpu();
  // Rows gathered in reverse, then sin and sigmoid: at O3 the SLP vectorizer bundles the sinf
  // calls of two rows into one 8-wide call (the pattern a random graph found).
  auto fn = [](ag::Tensor x, ag::Tensor b) {
    const ag::Tensor reversed = ag::range(static_cast<int>(x.shape()[0]) - 1, -1, -1);
    return ag::sigmoid(ag::sin(ag::gather(x, reversed))) + b;
  };
  auto f = ag::function(fn);
  const char* saved = std::getenv("AG_JIT_OPT");
  setenv("AG_JIT_OPT", "3", 1);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 4}, {2, 4}}) {
    const ag::Tensor x = ag::random_uniform(shape, ag::float32, -3, 3, 7), b = ag::random_uniform(shape, ag::float32, -3, 3, 8);
    const std::string ir = f.get_concrete_function(x, b).llvm_ir(true);
    if (cpu == "x86-64-v2") {
      EXPECT_FALSE(agtest::ir_calls(ir, "_ZGVd")) << "an AVX2 libmvec variant in x86-64-v2 code:\n" << ir;
    }
    EXPECT_FALSE(agtest::ir_calls(ir, "_ZGVe")) << ir;
    EXPECT_TRUE(agtest::same_tensor(fn(x, b), f(x, b)));
  }
  if (saved) setenv("AG_JIT_OPT", saved, 1);
  else unsetenv("AG_JIT_OPT");
}

}  // namespace
