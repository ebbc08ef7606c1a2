// Loop nests of agc's own vector code, moved out of a large entry into functions of their own
// for the split compile (module_split.cpp), skip LLVM's IR optimizer as the kernels and the
// vector loops' pool workers do (optimizer.h, kEmittedOptimized): the emitter's vector loops
// leave it nothing to vectorize, and it cost LSTM's second module 6 ms of its 8. Checked on the
// optimized IR: such a nest keeps what InstCombine folds at once (`add i64 0, ...`); the entry and
// the code moved beside the nests (scalar loops, which LLVM vectorizes) keep none; values
// eager == JIT.
#include <string>
#include <tuple>
#include <vector>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

// The texts of the functions defined whose names start with `prefix`.
std::vector<std::string> functions_named(const std::string& ir, const std::string& prefix) {
  std::vector<std::string> out;
  for (size_t at = ir.find("define "); at != std::string::npos; at = ir.find("\ndefine ", at + 1)) {
    const size_t begin = ir[at] == '\n' ? at + 1 : at;
    const size_t eol = ir.find('\n', begin);
    if (ir.substr(begin, eol - begin).find("@" + prefix) == std::string::npos) continue;
    const size_t end = ir.find("\n}\n", begin);
    if (end != std::string::npos) out.push_back(ir.substr(begin, end + 2 - begin));
  }
  return out;
}

bool is_vector_code(const std::string& fn) { return fn.find(" x float>") != std::string::npos; }
bool left_as_emitted(const std::string& fn) { return fn.find("add i64 0, ") != std::string::npos; }

// A softmax-like row block and a ReLU's gradient, as in a training step: rows of 10 (scalar loops
// that LLVM vectorizes) and rows of 256 with a bias broadcast over them (agc's vector loops: a
// block loop under the row loop, too short to split over threads).
std::tuple<Tensor, Tensor, Tensor, Tensor> step(Tensor x, Tensor g, Tensor logits, Tensor b) {
  const Tensor shifted = logits - ag::reduce_max(logits, 1, true);
  const Tensor p = ag::exp(shifted) / ag::reduce_sum(ag::exp(shifted), 1, true);
  const Tensor relu_grad = ag::where(x + b > 0.f, g * 0.5f + x * 0.25f - g * x, ag::zeros_like(g));
  const Tensor scaled = relu_grad * 1.5f + ag::maximum(x, g) * 0.75f - x;
  return {p, ag::reduce_sum(scaled, 0), ag::reduce_sum(p * logits, 1), scaled - g};
}

TEST(EmittedNests, VectorLoopNestsSkipTheOptimizerScalarOnesDoNot) {
  const agtest::ScopedEnv no_cache("AG_CACHE_DIR", "off"), split("AG_JIT_SPLIT", "1");
  const Tensor x = ag::random_normal({64, 256}, ag::float32, 0, 1, 1), g = ag::random_normal({64, 256}, ag::float32, 0, 1, 2),
               logits = ag::random_normal({64, 10}, ag::float32, 0, 1, 3), b = ag::random_normal({256}, ag::float32, 0, 1, 4);
  auto f = ag::function(step);
  auto c = f.get_concrete_function(x, g, logits, b);
  const std::string optimized = c.llvm_ir(true);
  const std::vector<std::string> nests = functions_named(optimized, "agc_entry.nest");
  int vector_nests = 0;
  for (const std::string& nest : nests) {
    if (is_vector_code(nest) && left_as_emitted(nest)) ++vector_nests;
    if (!is_vector_code(nest)) EXPECT_FALSE(left_as_emitted(nest)) << "a scalar loop nest was not optimized:\n" << nest;
  }
  EXPECT_GE(vector_nests, 1) << "no nest of vector code left as emitted among " << nests.size() << ":\n" << optimized;
  // The rest, the entry (and a tail moved beside the nests, if any), is optimized.
  std::vector<std::string> rest = functions_named(optimized, "agc_entry.tail");
  for (const std::string& e : functions_named(optimized, "agc_entry"))
    if (e.find("@agc_entry(") != std::string::npos) rest.push_back(e);
  EXPECT_GE(rest.size(), 1u) << optimized;
  for (const std::string& fn : rest) EXPECT_FALSE(left_as_emitted(fn)) << "not optimized:\n" << fn;

  const auto [p, sums, dots, diff] = f(x, g, logits, b);
  const auto [p0, sums0, dots0, diff0] = step(x, g, logits, b);
  EXPECT_TRUE(agtest::same_tensor(p0, p));
  EXPECT_TRUE(agtest::same_tensor(sums0, sums, {1e-4, 1e-4}));
  EXPECT_TRUE(agtest::same_tensor(dots0, dots, {1e-4, 1e-5}));
  EXPECT_TRUE(agtest::same_tensor(diff0, diff));
}

}  // namespace
