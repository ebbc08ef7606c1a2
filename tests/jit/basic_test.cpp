// First end-to-end checks: functions run through the JIT backend and agree with eager mode.
#include "jit_test_util.h"

namespace {

TEST(JitBasic, BackendIsRegisteredByLinking) {
  ASSERT_NE(ag::compiler_backend(), nullptr);
  EXPECT_EQ(ag::compiler_backend()->name(), "jit");
}

TEST(JitBasic, FusedChain) {
  auto fn = [](ag::Tensor x) { return ag::relu(x * 2.0f + 1.0f) * 3.0f - ag::tanh(x); };
  const ag::Tensor x = ag::random_uniform({1000}, ag::float32, -2, 2, 7);
  agtest::expect_three_way("fused chain", fn, {}, x);
}

TEST(JitBasic, IntegerScalarLoop) {
  auto collatz = [](ag::Tensor n) {
    ag::Tensor steps = 0;
    ag::while_stmt([&] { return n > 1; },
                   [&] {
                     ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"},
                                 AG_SOURCE_LOC("collatz.cpp", 4));
                     steps += 1;
                   },
                   ag::state(n, steps), {"n", "steps"}, AG_SOURCE_LOC("collatz.cpp", 3));
    return steps;
  };
  agtest::expect_three_way("collatz", collatz, {}, ag::Tensor(27));
  auto f = ag::function(collatz);
  EXPECT_EQ(f(ag::Tensor(27)).item<int>(), 111);
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

TEST(JitBasic, MatMulChain) {
  auto power = [](ag::Tensor x) {
    ag::Tensor r = ag::eye(10, ag::int32);
    for (int i = 0; i < 100; ++i) r = ag::matmul(x, r);
    return r;
  };
  const ag::Tensor x = ag::random_uniform({10, 10}, ag::int32, -3, 3, 1);
  agtest::expect_three_way("power", power, {}, x);
}

}  // namespace

namespace {

TEST(JitInspection, IrBeforeAndAfterOptimizationAndAssembly) {
  auto f = ag::function([](ag::Tensor x) { return ag::relu(x * 2.0f + 1.0f) - ag::exp(x); });
  auto c = f.get_concrete_function(ag::TensorSpec({1024}, ag::float32));
  const std::string lowered = c.llvm_ir(false), optimized = c.llvm_ir(true), assembly = c.assembly();
  EXPECT_NE(lowered.find("define i32 @agc_entry"), std::string::npos) << lowered;
  EXPECT_NE(assembly.find("agc_entry:"), std::string::npos);
  // One fused vector loop calling libmvec's exp at the width of the target: SSE for x86-64-v2,
  // AVX2 for -v3, AVX-512 where the machine has it (vector_math_test.cpp covers the rest).
  const int64_t bytes = agtest::jit_vector_bytes();
  const std::string lanes = std::to_string(bytes / 4);
  const std::string variant = std::string("_ZGV") + (bytes == 64 ? 'e' : bytes == 32 ? 'd' : 'b') + "N" + lanes + "v_expf";
  EXPECT_TRUE(agtest::ir_calls(lowered, variant)) << lowered;
  EXPECT_NE(optimized.find("<" + lanes + " x float>"), std::string::npos);
  EXPECT_TRUE(agtest::ir_calls(optimized, variant)) << optimized;
  EXPECT_NE(assembly.find(bytes == 64 ? "zmm" : bytes == 32 ? "ymm" : "xmm"), std::string::npos);
}

}  // namespace
