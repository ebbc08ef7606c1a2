// agc's optimization pipeline (the default AG_JIT_OPT=2: O2's function passes without its
// interprocedural half, function_pipeline.cpp) gives agc's code what LLVM's full pipeline gives
// it: each program's machine code has within a few instructions of what AG_JIT_OPT=3 (LLVM's O3,
// its pipeline with the inliner, IPSCCP and attribute inference) gives, and the same vector
// loops. A pass the code needs and the pipeline lacks shows here as more code: without the jump
// threading that moves a block loop's masked last block after the loop, a periodic stencil's
// nests were 1.2-1.6x larger; without the full unroll of the loops agc marks, k-means' distances
// stayed loops. Values eager == interpreter == JIT under the default pipeline.
#include <regex>

#include "jit_test_util.h"
#include "../common/scoped_env.h"

namespace {

using ag::Tensor;

struct Compiled {
  std::string assembly, ir;
};

template <class F, class... Args>
Compiled compile_at(const char* level, F fn, const Args&... args) {
  const agtest::ScopedEnv cache("AG_CACHE_DIR", "off"), opt("AG_JIT_OPT", level);
  auto f = ag::function(fn);
  ag::ConcreteFunction cf = f.get_concrete_function(args...);
  return {cf.assembly(), cf.llvm_ir()};
}

// Machine instructions: the assembly's lines that are neither labels, directives nor comments.
int instructions(const std::string& assembly) {
  static const std::regex instruction(R"(^\s+[a-z][a-z0-9.]*(\s|$))", std::regex::multiline);
  return static_cast<int>(std::distance(std::sregex_iterator(assembly.begin(), assembly.end(), instruction), std::sregex_iterator()));
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

template <class F, class... Args>
void expect_code_of_llvms_pipeline(const std::string& what, F fn, const Args&... args) {
  const Compiled agc = compile_at("2", fn, args...), llvm = compile_at("3", fn, args...);
  const int ours = instructions(agc.assembly), theirs = instructions(llvm.assembly);
  ASSERT_GT(theirs, 0) << what << ": no assembly\n" << llvm.assembly;
  EXPECT_LE(ours, theirs + theirs / 20 + 4) << what << ": agc's pipeline left more code than LLVM's O3\n"
                                            << agc.assembly << "\n---- O3 ----\n" << llvm.assembly;
  EXPECT_EQ(count(agc.ir, "vector.body:"), count(llvm.ir, "vector.body:")) << what << ": loops LLVM vectorized\n" << agc.ir;
  EXPECT_EQ(count(agc.ir, "llvm.loop.unroll.full"), 0) << what << ": a loop agc marked was not unrolled\n" << agc.ir;
  agtest::expect_three_way(what, fn, {}, args...);
}

TEST(AgcPipeline, GivesTheCodeOfLlvmsPipeline) {
  // A periodic stencil on a row that is not whole vectors: block loops with a masked last block.
  auto stencil = [](Tensor u) {
    return u + 0.1f * (ag::roll(u, 1, 0) + ag::roll(u, -1, 0) + ag::roll(u, 1, 1) + ag::roll(u, -1, 1) - 4.0f * u);
  };
  // k-means' distances: a reduction over a last axis of 8, unrolled as agc marks it.
  auto nearest = [](Tensor x, Tensor c) {
    return ag::argmin(ag::reduce_sum(ag::square(ag::expand_dims(x, 1) - ag::expand_dims(c, 0)), {2}), 1);
  };
  // Integer results stay scalar loops for LLVM's vectorizer.
  auto collatz_step = [](Tensor n) { return ag::where(n % 2 == 0, n / 2, 3 * n + 1); };
  // A staged loop whose body has a loop-invariant product (LICM) and a vector state.
  auto accumulate = [](Tensor x, Tensor n) {
    Tensor i = ag::constant(0), acc = ag::zeros_like(x);
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     acc = acc + ag::exp(x) * 0.5f;
                     i += 1;
                   },
                   ag::state(i, acc), {"i", "acc"}, AG_SOURCE_LOC("agc_pipeline_test.cpp", 70));
    return acc;
  };
  expect_code_of_llvms_pipeline("periodic stencil", stencil, ag::random_uniform({64, 254}, ag::float32, 0, 1, 3));
  expect_code_of_llvms_pipeline("nearest centroid", nearest, ag::random_uniform({1000, 8}, ag::float32, -1, 1, 4),
                                ag::random_uniform({6, 8}, ag::float32, -1, 1, 5));
  expect_code_of_llvms_pipeline("collatz step", collatz_step, ag::random_uniform({4099}, ag::int32, 1, 1000, 6));
  expect_code_of_llvms_pipeline("staged accumulation", accumulate, ag::random_uniform({1000}, ag::float32, -1, 1, 7), Tensor(50));
}

}  // namespace
