// The libLLVM options the engine sets when it is created (jit/src/engine.cpp, set_llvm_options),
// read the way the passes that use them read them. The post-RA scheduler takes its option as
// given only at a position above 0 (`EnablePostRAScheduler.getPosition() > 0`): set at position 0
// until stop 71, it was on in every compile while docs/jit.md said it was off.
#include <gtest/gtest.h>

#include <llvm/Support/CommandLine.h>

#include "ag/ag.h"

namespace {

template <class T>
llvm::cl::opt<T>* llvm_option(const char* name) {
  llvm::cl::Option* o = llvm::cl::getRegisteredOptions().lookup(name);
  return static_cast<llvm::cl::opt<T>*>(o);
}

TEST(JitLlvmOptions, TheCodeGeneratorsOptionsAreSetAsThePassesReadThem) {
  auto f = ag::function([](ag::Tensor x) { return x * 2.f; });
  ASSERT_EQ(f(ag::ones({4})).to_vector<float>(), std::vector<float>(4, 2.f));  // the engine exists

  llvm::cl::opt<bool>* post_ra = llvm_option<bool>("post-RA-scheduler");
  ASSERT_NE(post_ra, nullptr);
  EXPECT_GT(post_ra->getPosition(), 0u) << "at position 0 the post-RA scheduler ignores the option";
  EXPECT_FALSE(post_ra->getValue());

  llvm::cl::opt<bool>* lsr = llvm_option<bool>("disable-lsr");
  ASSERT_NE(lsr, nullptr);
  EXPECT_TRUE(lsr->getValue());

  llvm::cl::opt<unsigned>* epilogue = llvm_option<unsigned>("epilogue-vectorization-minimum-VF");
  ASSERT_NE(epilogue, nullptr);
  EXPECT_GT(epilogue->getNumOccurrences(), 0);
  EXPECT_EQ(epilogue->getValue(), 32u);
}

}  // namespace
