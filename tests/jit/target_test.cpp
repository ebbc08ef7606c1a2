// The JIT's target (jit/src/target.h): the vector width agc splits its own kernels by, for the
// host and for each CPU AG_JIT_CPU may name. A named CPU lists the features it names without
// those they imply: x86-64-v4 lists avx512vl and avx512bw but not avx512f, and its code took
// 32-byte vectors until the implied features were counted.
#include <gtest/gtest.h>

#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "target.h"

namespace {

int bytes_for(const char* cpu) {
  llvm::orc::JITTargetMachineBuilder b{llvm::Triple("x86_64-pc-linux-gnu")};
  b.setCPU(cpu);
  return ag::jit::vector_bytes(b);
}

TEST(JitTarget, TheVectorWidthOfEachNamedCpu) {
  EXPECT_EQ(bytes_for("x86-64"), 16);
  EXPECT_EQ(bytes_for("x86-64-v2"), 16);
  EXPECT_EQ(bytes_for("x86-64-v3"), 32);
  EXPECT_EQ(bytes_for("x86-64-v4"), 64);
  EXPECT_EQ(bytes_for("haswell"), 32);
  EXPECT_EQ(bytes_for("znver3"), 32);
  EXPECT_EQ(bytes_for("skylake-avx512"), 64);
  EXPECT_EQ(bytes_for("sapphirerapids"), 64);
}

TEST(JitTarget, TheHostsVectorWidthFollowsItsFeatures) {
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  ASSERT_TRUE(static_cast<bool>(host));
  const int expected = __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx2") ? 32 : 16;
  EXPECT_EQ(ag::jit::vector_bytes(*host), expected);
}

}  // namespace
