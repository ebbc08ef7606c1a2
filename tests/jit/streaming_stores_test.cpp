// Non-temporal stores (jit/src/lower/lower_fused_vector.cpp, AG_NONTEMPORAL): a vector loop
// whose result is larger than the bar writes it around the cache, in aligned whole blocks, and
// fences the stores where each thread's range ends. Checked: which loops stream (the IR's
// `!nontemporal` stores and sfence, the machine code's movntps), that a pool worker fences its
// own stores, that the values are those of cached stores bit for bit (and eager == interpreter
// == JIT), and that a bad setting is a ValueError naming it. The bar is set low here, so small
// tensors exercise what a default machine does past 3/4 of its last-level cache.
// ctest runs these under x86-64-v2 and -v3 too (16- and 32-byte vectors).
#include <string>
#include <utility>

#include "ag/detail/parallel.h"
#include "ag/detail/streaming_stores.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;

Tensor cheap(const Tensor& x) { return ag::maximum(x * 1.5f + 0.25f, 0.0f) * 2.0f + x; }
Tensor with_bias(const Tensor& x, const Tensor& b) { return ag::relu(x + b); }

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

struct Compiled {
  std::string lowered, assembly;
  Tensor result;
};

template <class F, class... Args>
Compiled compile(const char* bar, F fn, const Args&... args) {
  const agtest::ScopedEnv env("AG_NONTEMPORAL", bar);
  auto f = ag::function(fn);
  auto cf = f.get_concrete_function(args...);
  return {cf.llvm_ir(false), cf.assembly(), f(args...)};
}

// Streams at bar 1024 bytes, not with the setting off; the same values either way.
template <class F, class... Args>
void expect_streams(const std::string& what, F fn, const Args&... args) {
  const Compiled on = compile("1024", fn, args...), off = compile("0", fn, args...);
  EXPECT_GE(count(on.lowered, "!nontemporal"), 1) << what;
  EXPECT_GE(count(on.lowered, "call void @llvm.x86.sse.sfence()"), 1) << what;
  EXPECT_GE(count(on.assembly, "movntps"), 1) << what << ": no streaming store in the machine code";
  EXPECT_GE(count(on.assembly, "sfence"), 1) << what;
  EXPECT_EQ(count(off.lowered, "!nontemporal"), 0) << what;
  EXPECT_EQ(count(off.lowered, "sfence"), 0) << what;
  EXPECT_TRUE(agtest::same_tensor(off.result, on.result, {.rtol = 0, .atol = 0})) << what;
  const agtest::ScopedEnv env("AG_NONTEMPORAL", "1024");
  agtest::expect_three_way(what, fn, {.rtol = 1e-5, .atol = 1e-6}, args...);
}

template <class F, class... Args>
void expect_no_stream(const std::string& what, F fn, const Args&... args) {
  const Compiled on = compile("1024", fn, args...);
  EXPECT_EQ(count(on.lowered, "!nontemporal"), 0) << what;
  EXPECT_EQ(count(on.lowered, "sfence"), 0) << what;
}

class StreamingStores : public ::testing::Test {
  agtest::ScopedEnv no_cache_{"AG_CACHE_DIR", "off"};
  agtest::ScopedEnv vector_loops_{"AG_JIT_VECTOR_LOOPS", "1"};
};

TEST_F(StreamingStores, AResultPastTheBarStreamsWithTheSameValues) {
  for (int64_t n : {4096, 4096 + 5, 1000}) {  // whole blocks; a masked or scalar last block
    const Tensor x = ag::random_uniform({n}, ag::float32, -3, 3, static_cast<uint64_t>(n));
    expect_streams("cheap, n=" + std::to_string(n), cheap, x);
  }
  const Tensor m = ag::random_uniform({64, 48}, ag::float32, -2, 2, 7), b = ag::random_uniform({48}, ag::float32, -1, 1, 8);
  expect_streams("rows of whole blocks with a broadcast row", with_bias, m, b);
  const Tensor d = ag::random_uniform({1024}, ag::float64, -2, 2, 9);
  const Compiled f64 = compile("1024", cheap, d);
  EXPECT_GE(count(f64.assembly, "movntpd"), 1) << "float64: no streaming store";
}

TEST_F(StreamingStores, SmallResultsAndUnalignedRowsStayCached) {
  const Tensor small = ag::random_uniform({200}, ag::float32, -3, 3, 10);  // 800 bytes, under the bar
  expect_no_stream("under the bar", cheap, small);
  // Rows of 37 floats: a row's blocks do not start on vector boundaries.
  const Tensor m = ag::random_uniform({64, 37}, ag::float32, -2, 2, 11), b = ag::random_uniform({37}, ag::float32, -1, 1, 12);
  expect_no_stream("rows of 37", with_bias, m, b);
  // A value that is not a result (here reduced right away): its buffer is the code's own.
  expect_no_stream("an intermediate", [](const Tensor& x) { return ag::reduce_sum(ag::exp(cheap(x)) * 2.0f); },
                   ag::random_uniform({4096}, ag::float32, -3, 3, 13));
}

TEST_F(StreamingStores, EachPoolWorkerFencesItsOwnStores) {
  const Tensor x = ag::random_uniform({(1 << 20) + 16}, ag::float32, -3, 3, 14);
  const ag::detail::ScopedNumThreads two(2);
  const Compiled on = compile("1024", cheap, x);
  EXPECT_TRUE(agtest::ir_calls(on.lowered, "agc_rt_parallel_for"));
  // One fence where the worker's range ends (moved out with the loop), one after the whole loop.
  EXPECT_GE(count(on.lowered, "call void @llvm.x86.sse.sfence()"), 2);
  expect_streams("cheap over the pool", cheap, x);
}

// `auto`: from 3/4 of the last-level cache the sysfs reports (a result just past the bar
// streams, one of half that size does not).
TEST_F(StreamingStores, TheDefaultBarIsThreeQuartersOfTheLastLevelCache) {
  const int64_t llc = ag::detail::last_level_cache_bytes();
  ASSERT_GE(llc, int64_t{1} << 20);
  const int64_t past = (llc / 4 * 3 / 4 + 16) / 16 * 16;  // floats
  for (const auto& [n, streams] : {std::pair{past, true}, std::pair{past / 2, false}}) {
    const Tensor x = ag::random_uniform({n}, ag::float32, -3, 3, 16);
    const Compiled c = compile("auto", cheap, x);
    EXPECT_EQ(count(c.lowered, "!nontemporal") > 0, streams) << n << " floats, last-level cache " << llc << " bytes";
  }
}

// AG_JIT_NONTEMPORAL is the variable's name from before eager kernels streamed too: still read
// when AG_NONTEMPORAL is unset.
TEST_F(StreamingStores, ABadSettingIsAValueErrorNamingIt) {
  for (const char* name : {"AG_NONTEMPORAL", "AG_JIT_NONTEMPORAL"}) {
    const agtest::ScopedEnv env(name, "lots");
    auto f = ag::function(cheap);
    try {
      f(ag::random_uniform({64}, ag::float32, -1, 1, 15));
      ADD_FAILURE() << name << ": no error";
    } catch (const ag::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + "='lots'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
