// ctest runs runtime_tests once per kernel instruction-set level with AG_KERNEL_ISA set. A
// level this CPU cannot run is skipped (exit code 77, reported by ctest as skipped with the
// missing features); an unknown level fails with the runtime's own error.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <ag/ag.h>
#include <ag/detail/kernel_set.h>
#include <gtest/gtest.h>

namespace {

const char* forced_isa() {
  const char* e = std::getenv("AG_KERNEL_ISA");
  return e && *e ? e : nullptr;
}

class KernelIsaLevel : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* isa = forced_isa();
    if (!isa) return;
    for (const ag::detail::KernelSet* k : ag::detail::built_kernel_sets()) {
      if (std::string_view(k->isa) != isa) continue;
      const std::string missing = ag::detail::missing_cpu_features(*k);
      if (!missing.empty()) {
        std::printf("SKIPPED: the %s kernels need %s, which this CPU lacks\n", isa, missing.c_str());
        std::exit(77);
      }
    }
    try {
      (void)ag::kernel_isa();
    } catch (const ag::Error& e) {
      std::printf("%s\n", e.what());
      std::exit(1);
    }
  }
};

[[maybe_unused]] ::testing::Environment* const g_env = ::testing::AddGlobalTestEnvironment(new KernelIsaLevel);

// The level the process runs is the one asked for, else the widest this CPU supports.
TEST(KernelIsa, TheChosenLevelIsTheOneAskedForOrTheWidestSupported) {
  if (const char* isa = forced_isa()) {
    EXPECT_EQ(ag::kernel_isa(), isa);
    return;
  }
  std::string_view widest;
  for (const ag::detail::KernelSet* k : ag::detail::built_kernel_sets())
    if (ag::detail::missing_cpu_features(*k).empty()) widest = k->isa;
  EXPECT_EQ(ag::kernel_isa(), widest);
}

// Every level this build has, and the features each needs, in the test log.
TEST(KernelIsa, EveryBuiltLevelIsListedWithWhatItNeeds) {
  ASSERT_GE(ag::detail::built_kernel_sets().size(), 3u);  // x86-64-v2, v3, v4 at least
  for (const ag::detail::KernelSet* k : ag::detail::built_kernel_sets()) {
    const std::string missing = ag::detail::missing_cpu_features(*k);
    std::printf("kernel level %-10s %s\n", k->isa, missing.empty() ? "runs on this CPU" : ("needs " + missing).c_str());
    EXPECT_NE(k->cpu_features, 0u) << k->isa;
  }
  EXPECT_STREQ(ag::detail::built_kernel_sets().front()->isa, "x86-64-v2");
}

}  // namespace
