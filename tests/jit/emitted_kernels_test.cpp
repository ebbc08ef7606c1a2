// Matmul kernels are emitted as the code agc wants (optimizer.h, kEmittedOptimized): LLVM's IR
// optimizer skips them and only the code generator works on them, while the entry function around
// them is optimized as before. Checked on the optimized IR: a kernel keeps what InstCombine would
// have folded at once (a zero-offset getelementptr), the entry keeps none; in a module compiled
// whole (AG_JIT_SPLIT=0) as in a split one; values eager == interpreter == JIT.
#include <string>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

using agtest::power;
Tensor dense(const Tensor& x, const Tensor& w) { return ag::tanh(ag::matmul(x, w)); }

// The text of the first function defined whose name starts with `prefix` ("" if there is none).
std::string function_text(const std::string& ir, const std::string& prefix) {
  for (size_t at = ir.find("define "); at != std::string::npos; at = ir.find("\ndefine ", at + 1)) {
    const size_t begin = ir[at] == '\n' ? at + 1 : at;
    const size_t eol = ir.find('\n', begin);
    if (ir.substr(begin, eol - begin).find("@" + prefix) == std::string::npos) continue;
    const size_t end = ir.find("\n}\n", begin);
    return end == std::string::npos ? "" : ir.substr(begin, end + 2 - begin);
  }
  return "";
}

bool has_zero_offset_gep(const std::string& fn_text) {
  for (size_t at = fn_text.find("getelementptr"); at != std::string::npos; at = fn_text.find("getelementptr", at + 1))
    if (fn_text.substr(at, fn_text.find('\n', at) - at).ends_with(", i64 0")) return true;
  return false;
}

template <class F, class... Args>
void expect_kernel_left_as_emitted(F fn, const Args&... args) {
  auto f = ag::function(fn);
  auto c = f.get_concrete_function(args...);
  const std::string raw = c.llvm_ir(false), optimized = c.llvm_ir(true);
  const std::string raw_kernel = function_text(raw, "agc.gemm."), kernel = function_text(optimized, "agc.gemm.");
  ASSERT_FALSE(kernel.empty()) << optimized;
  EXPECT_TRUE(has_zero_offset_gep(raw_kernel)) << raw_kernel;  // what the emitter writes
  EXPECT_TRUE(has_zero_offset_gep(kernel)) << kernel;          // no function pass ran on it
  const std::string raw_entry = function_text(raw, "agc_entry"), entry = function_text(optimized, "agc_entry");
  ASSERT_FALSE(entry.empty()) << optimized;
  EXPECT_TRUE(has_zero_offset_gep(raw_entry)) << raw_entry;
  EXPECT_FALSE(has_zero_offset_gep(entry)) << entry;  // the entry is optimized as before
}

class EmittedKernels : public ::testing::TestWithParam<const char*> {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
  agtest::ScopedEnv split_{"AG_JIT_SPLIT", GetParam()};
};

TEST_P(EmittedKernels, TheOptimizerLeavesKernelsAsEmittedAndOptimizesTheEntry) {
  expect_kernel_left_as_emitted(power, ag::random_uniform({10, 10}, ag::int32, -2, 3, 1));
  expect_kernel_left_as_emitted(dense, ag::random_uniform({8, 32}, ag::float32, -1, 1, 2),
                                ag::random_uniform({32, 32}, ag::float32, -1, 1, 3));
}

TEST_P(EmittedKernels, ValuesMatchEagerAndTheInterpreter) {
  agtest::expect_three_way("x^31 (int32)", power, {}, ag::random_uniform({10, 10}, ag::int32, -2, 3, 4));
  agtest::expect_three_way("tanh(a @ w)", dense, {.rtol = 1e-4, .atol = 1e-6},
                           ag::random_uniform({8, 32}, ag::float32, -1, 1, 5),
                           ag::random_uniform({32, 32}, ag::float32, -1, 1, 6));
}

// "1": kernels compile as a second module (docs/jit.md, "Two threads per compile"); "0": whole.
INSTANTIATE_TEST_SUITE_P(SplitOrWhole, EmittedKernels, ::testing::Values("1", "0"));

}  // namespace
