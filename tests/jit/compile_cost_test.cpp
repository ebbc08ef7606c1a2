// What the code generator is given to compile: each fused elementwise loop becomes one vector
// body and at most one plain scalar remainder. LLVM's defaults added a vectorized remainder (on
// AVX-512) and a runtime-unrolled copy of the scalar one, which cost half of a small function's
// compile time and ran at most 15 elements (docs/jit.md, "Compile times"); byte loops keep the
// vectorized remainder (up to 31 elements). A float loop is now
// emitted as vector code by agc itself (lower_fused_vector.cpp): one block of vector loads,
// operations and one vector store, and for the last partial block the same under a mask
// (AVX-512) or a scalar loop; LLVM's vectorizer leaves it alone. Each case also
// checks values eager == interpreter == JIT on sizes that leave a remainder. And which modules
// skip LLVM's O2 pipeline for a short one (nothing to vectorize, unroll or hoist).
#include <mutex>
#include <regex>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

// The labels of the optimized IR's basic blocks ("vector.body", "par.outer.i.prol", ...).
std::vector<std::string> block_labels(const std::string& ir) {
  std::vector<std::string> labels;
  static const std::regex label(R"(^([A-Za-z$._][A-Za-z0-9$._-]*):)", std::regex::multiline);
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), label); it != std::sregex_iterator(); ++it)
    labels.push_back((*it)[1].str());
  return labels;
}

int count_starting_with(const std::vector<std::string>& labels, const std::string& prefix) {
  return static_cast<int>(std::count_if(labels.begin(), labels.end(), [&](const std::string& l) { return l.starts_with(prefix); }));
}

int count_containing(const std::vector<std::string>& labels, const std::string& part) {
  return static_cast<int>(
      std::count_if(labels.begin(), labels.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; }));
}

int count_matches(const std::string& ir, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(ir.begin(), ir.end(), re), std::sregex_iterator()));
}

template <class F>
void expect_one_vector_body_and_a_plain_remainder(const std::string& what, F fn, const Tensor& x) {
  auto f = ag::function(fn);
  const std::string ir = f.get_concrete_function(x).llvm_ir();
  const std::vector<std::string> labels = block_labels(ir);
  static const std::regex vector_store(R"(store <\d+ x float>)");
  static const std::regex masked_store(R"(call void @llvm\.masked\.store\.v\d+f32)");
  static const std::regex scalar_store(R"(store float )");
  const int masked = count_matches(ir, masked_store), scalar = count_matches(ir, scalar_store);
  EXPECT_EQ(count_matches(ir, vector_store), 1) << what << ": one vector body\n" << ir;
  EXPECT_EQ(masked + scalar, 1) << what << ": one remainder, masked (AVX-512) or scalar\n" << ir;
  EXPECT_EQ(count_starting_with(labels, "vector.body"), 0) << what << ": vectorized again by LLVM\n" << ir;
  EXPECT_EQ(count_starting_with(labels, "vec.epilog"), 0) << what << ": a vectorized remainder\n" << ir;
  EXPECT_EQ(count_containing(labels, ".prol"), 0) << what << ": a runtime-unrolled remainder\n" << ir;
  EXPECT_EQ(count_containing(labels, ".epil"), 0) << what << ": a runtime-unrolled remainder\n" << ir;
  agtest::expect_three_way(what, fn, {}, x);
}

TEST(CompileCost, ParallelFusedLoopIsOneVectorBodyAndAPlainRemainder) {
  // 2^20 + 13 elements: large enough for the pool's splittable loop, 13 left after the vectors.
  const Tensor x = ag::random_uniform({(1 << 20) + 13}, ag::float32, -3, 3, 5);
  expect_one_vector_body_and_a_plain_remainder(
      "relu(x*a+b)*c - tanh(x)", [](Tensor v) { return ag::relu(v * 0.5f + 0.25f) * 2.0f - ag::tanh(v); }, x);
}

TEST(CompileCost, SerialLoopIsOneVectorBodyAndAPlainRemainder) {
  const Tensor x = ag::random_uniform({1000 + 7}, ag::float32, -3, 3, 6);
  expect_one_vector_body_and_a_plain_remainder(
      "maximum(x*a+b, 0)*c + x", [](Tensor v) { return ag::maximum(v * 0.5f + 0.25f, 0.0f) * 2.0f + v; }, x);
}

TEST(CompileCost, BoolLoopIsOneVectorBodyAndOneVectorRemainder) {
  // One-byte elements have 32 to a vector from AVX2 on: their remainder of up to 31 is
  // vectorized once more (16 at a time), as the only loops that keep LLVM's epilogue
  // vectorization (engine.cpp): scalar, it took as long as a 1022-byte row's vector part. With
  // 16-byte vectors (x86-64-v2) the remainder is short and stays scalar.
  const Tensor a = ag::random_uniform({4096 + 31}, ag::int32, 0, 2, 7) > 0;
  const Tensor b = ag::random_uniform({4096 + 31}, ag::int32, 0, 2, 8) > 0;
  auto f = ag::function([](Tensor x, Tensor y) { return ag::logical_xor(x, y); });
  const std::string ir = f.get_concrete_function(a, b).llvm_ir();
  const std::vector<std::string> labels = block_labels(ir);
  EXPECT_EQ(count_starting_with(labels, "vector.body"), 1) << ir;
  EXPECT_EQ(count_starting_with(labels, "vec.epilog.vector.body"), agtest::jit_vector_bytes() >= 32 ? 1 : 0) << ir;
  // (the vectorized remainder's own blocks are named vec.epilog.*)
  EXPECT_EQ(count_containing(labels, ".prol") + count_containing(labels, ".epil") - count_starting_with(labels, "vec.epilog"), 0)
      << ir;
  agtest::expect_three_way("logical_xor (bool)", [](Tensor x, Tensor y) { return ag::logical_xor(x, y); }, {}, a, b);
}

// AG_LOG=compile's line for the first compile of `fn` on `args` (the disk cache off).
template <class F, class... Args>
std::string compile_log_line(F fn, const Args&... args) {
  std::mutex mu;
  std::string line;
  ag::detail::set_log_topics(static_cast<unsigned>(ag::detail::LogTopic::Compile));
  ag::set_log_sink([&](std::string_view s) {
    const std::lock_guard lock(mu);
    if (s.find("agc: jit: ") != std::string_view::npos && s.find(" loop nests") != std::string_view::npos) line = s;
  });
  const agtest::ScopedEnv cache("AG_CACHE_DIR", "off"), level("AG_JIT_OPT", "2");
  auto f = ag::function(fn);
  f(args...);
  ag::set_log_sink(nullptr);
  ag::detail::set_log_topics(0);
  return line;
}

Tensor collatz(Tensor n) {
  Tensor steps = 0;
  ag::while_stmt([&] { return n > 1; },
                 [&] {
                   ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"}, AG_SOURCE_LOC("compile_cost_test.cpp", 107));
                   steps += 1;
                 },
                 ag::state(n, steps), {"n", "steps"}, AG_SOURCE_LOC("compile_cost_test.cpp", 105));
  return steps;
}

Tensor power(Tensor x) {
  Tensor r = ag::eye(10, ag::int32);
  for (int i = 0; i < 100; ++i) r = ag::matmul(x, r);
  return r;
}

Tensor sum_of_squares(Tensor n) {  // a scalar loop LLVM may vectorize or compute in closed form
  Tensor i = 0, s = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   s += i * i;
                   i += 1;
                 },
                 ag::state(i, s), {"i", "s"}, AG_SOURCE_LOC("compile_cost_test.cpp", 126));
  return s;
}

// A module where LLVM's O2 pipeline has nothing to do takes a short clean-up pipeline instead
// (optimizer.cpp): the fused chain (an entry that hands agc's own vector loop to the pool),
// x + 1 on one element, and the chain of 100 small matmuls (a loop that calls the kernel). A
// staged while of plain arithmetic, a scalar loop LLVM vectorizes (AG_JIT_VECTOR_LOOPS=0) and
// a reduction take O2's. Values eager == interpreter == JIT.
TEST(CompileCost, ModulesWithNothingToOptimizeTakeTheShortPipeline) {
  auto chain = [](Tensor v) { return ag::relu(v * 0.5f + 0.25f) * 2.0f - ag::tanh(v); };
  auto plus_one = [](Tensor v) { return v + 1.0f; };
  auto sum = [](Tensor v) { return ag::reduce_sum(v * v); };
  const Tensor x = ag::random_uniform({(1 << 20) + 13}, ag::float32, -3, 3, 5), one = ag::constant({2.5f});
  const Tensor m = ag::random_uniform({10, 10}, ag::int32, -2, 3, 1);
  const std::string kShort = "(O2 short pipeline, ", kDefault = "(O2 agc pipeline, ";
  auto expect_pipeline = [&](const std::string& what, const std::string& line, const std::string& want) {
    EXPECT_NE(line.find(want), std::string::npos) << what << ": " << line;
  };
  expect_pipeline("fused chain", compile_log_line(chain, x), kShort);
  expect_pipeline("x + 1", compile_log_line(plus_one, one), kShort);
  expect_pipeline("100 matmuls", compile_log_line(power, m), kShort);
  expect_pipeline("collatz", compile_log_line(collatz, Tensor(27)), kDefault);
  expect_pipeline("sum of squares", compile_log_line(sum_of_squares, Tensor(1000)), kDefault);
  expect_pipeline("reduce_sum", compile_log_line(sum, x), kDefault);
  {
    const agtest::ScopedEnv scalar("AG_JIT_VECTOR_LOOPS", "0");
    expect_pipeline("scalar fused chain", compile_log_line(chain, x), kDefault);
  }
  agtest::expect_three_way("fused chain", chain, {}, x);
  agtest::expect_three_way("x + 1", plus_one, {}, one);
  agtest::expect_three_way("100 matmuls", power, {}, m);
  agtest::expect_three_way("collatz", collatz, {}, Tensor(27));
}

}  // namespace
