// The Function cache's bounds and accounting: aliases stay bounded, the default max_cached,
// max_traces with traces in flight, the retracing warning's window, and get_concrete_function
// with a TensorSpec against an input_signature.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;

TEST(FunctionCacheBounds, AliasesOfAGeneralizedTraceStayBounded) {
  std::atomic<int> traces{0};
  auto f = ag::function(
      [&](Tensor x) {
        ++traces;
        return x + 1;
      },
      {.reduce_retracing = true, .jit_compile = false, .max_cached = 4});
  for (int n = 1; n <= 10000; ++n) {
    Tensor out = f(ag::zeros({n}, ag::int32));
    ASSERT_EQ(out.shape(), ag::Shape({n}));
    ASSERT_EQ(out.to_vector<int>()[static_cast<size_t>(n - 1)], 1);
    ASSERT_LE(f.stats().aliases, 16) << "after " << n << " shapes";
  }
  EXPECT_EQ(traces, 2);  // [1], then [?] serves every other length
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(f.stats().aliases, 16);  // 4 * max_cached, the least recently used dropped
  EXPECT_EQ(f.concrete_functions().size(), 2u);
  // A dropped alias is only a lookup shortcut: the general trace still serves its shape.
  EXPECT_EQ(f(ag::zeros({3}, ag::int32)).to_vector<int>(), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(f.tracing_count(), 2);
}

TEST(FunctionCacheBounds, AliasesOfAnInputSignatureStayBounded) {
  auto f = ag::function([](Tensor x) { return x * 2; },
                        {.input_signature = {ag::TensorSpec::unknown_rank(ag::float32)}, .jit_compile = false,
                         .max_cached = 2});
  // Keys of an unknown-rank spec are per rank: ranks 1 and 2, many shapes each, trace twice.
  for (int n = 1; n <= 50; ++n) {
    f(ag::zeros({n}));
    f(ag::zeros({n, 2}));
  }
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_LE(f.stats().aliases, 8);

  auto g = ag::function([](Tensor x) { return x * 2; },
                        {.jit_compile = false, .max_cached = 2, .max_traces = 1,
                         .on_max_traces = ag::TracePolicy::generalize});
  for (int n = 1; n <= 200; ++n) EXPECT_EQ(g(ag::ones({n, 3})).shape(), ag::Shape({n, 3}));
  EXPECT_EQ(g.tracing_count(), 2);
  EXPECT_EQ(g.stats().aliases, 8);
}

TEST(FunctionCacheBounds, MaxCachedDefaultsTo64) {
  agtest::LogCapture quiet;  // the retracing warning
  auto f = ag::function([](Tensor x) { return x - 1; }, agtest::interpreted());
  for (int n = 1; n <= 64; ++n) f(ag::zeros({n}));
  f(ag::zeros({1}));  // all 64 kept: a hit, and [1] becomes the most recently used
  EXPECT_EQ(f.tracing_count(), 64);
  EXPECT_EQ(f.stats().evictions, 0);
  f(ag::zeros({65}));  // the 65th evicts the least recently used, [2]
  EXPECT_EQ(f.stats().evictions, 1);
  EXPECT_EQ(f.concrete_functions().size(), 64u);
  f(ag::zeros({1}));
  EXPECT_EQ(f.stats().traces, 65);
  f(ag::zeros({2}));
  EXPECT_EQ(f.stats().traces, 66);
  EXPECT_EQ(f.tracing_count(), 64);  // the traces it holds
}

// A traced body that holds its trace open until the test lets it go.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool open = false;
  void enter_and_wait() {
    std::unique_lock lock(mu);
    ++inside;
    cv.notify_all();
    // Bounded: if a bug lets a second trace in, the test fails instead of hanging.
    cv.wait_for(lock, std::chrono::seconds(5), [&] { return open; });
  }
  void wait_inside(int n) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return inside >= n; });
  }
  void release() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(FunctionCacheBounds, MaxTracesCountsTracesInFlight) {
  Gate gate;
  auto f = ag::function(
      [&](Tensor x) {
        gate.enter_and_wait();
        return x + 1;
      },
      {.jit_compile = false, .name = "capped", .max_traces = 1});
  std::thread first([&] { f(ag::zeros({1})); });
  gate.wait_inside(1);  // the first trace is running, not finished
  expect_error<ag::ValueError>([&] { f(ag::zeros({2})); }, {"'capped'", "max_traces=1"});
  gate.release();
  first.join();
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(gate.inside, 1);
  EXPECT_EQ(f(ag::zeros({1})).to_vector<float>(), (std::vector<float>{1}));
}

TEST(FunctionCacheBounds, FailedTraceInFlightFreesItsPlaceUnderTheCap) {
  auto f = ag::function(
      [](Tensor x, bool fail) {
        if (fail) throw ag::ValueError("refused");
        return x;
      },
      {.jit_compile = false, .max_traces = 1});
  expect_error<ag::ValueError>([&] { f(ag::zeros({1}), true); }, {"refused"});
  EXPECT_EQ(f(ag::zeros({1}), false).shape(), ag::Shape({1}));  // the failed trace does not count
  EXPECT_EQ(f.tracing_count(), 1);
}

// T = a call with a new shape (traces), H = the same shape again (a cache hit).
std::vector<std::string> warnings_after(const std::string& calls) {
  agtest::LogCapture logs;
  auto f = ag::function([](Tensor x) { return x; }, {.jit_compile = false, .name = "w"});
  int n = 0;
  for (char c : calls) f(ag::zeros({c == 'T' ? ++n : n}));
  std::vector<std::string> out;
  for (const auto& l : logs.lines())
    if (l.find("traced a new graph") != std::string::npos) out.push_back(l);
  return out;
}

std::string warning_text(int traced, int calls, const std::string& reason) {
  return "agc: WARNING: " + std::to_string(traced) + " of the last " + std::to_string(calls) +
         " calls of Function 'w' traced a new graph (the latest because " + reason +
         "). Tracing is expensive. Common causes: (1) tensors of many different shapes: give "
         "FunctionOptions::input_signature unknown dims (-1) or set reduce_retracing; (2) plain C++ numbers that "
         "change between calls: pass ag::Tensor instead; (3) calling ag::function repeatedly in a loop: create the "
         "Function once.\n";
}

TEST(FunctionCacheBounds, RetracingWarningCountsHitsInItsWindow) {
  EXPECT_TRUE(warnings_after("THTHTHT").empty());  // 4 of 7: below the threshold
  const auto eight = warnings_after("THTHTHTT");
  ASSERT_EQ(eight.size(), 1u);
  EXPECT_EQ(eight[0], warning_text(5, 8, "arg 0: shape [1] -> [5]"));
  const auto nine = warnings_after("THTHTHTHT");
  ASSERT_EQ(nine.size(), 1u);
  EXPECT_EQ(nine[0], warning_text(5, 9, "arg 0: shape [1] -> [5]"));
  // Hits long before the window count as calls, not as traces: 5 traces in the last 10 calls.
  EXPECT_TRUE(warnings_after("THHHHHHHHHHTTTT").empty());  // 4 of the last 10
  const auto late = warnings_after("THHHHHHHHHHTTTTT");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0], warning_text(5, 10, "arg 0: shape [1] -> [6]"));
  const auto all = warnings_after("TTTTT");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], warning_text(5, 5, "arg 0: shape [1] -> [5]"));
}

TEST(FunctionCacheBounds, GetConcreteFunctionChecksASpecAgainstTheInputSignature) {
  auto f = ag::function([](Tensor x) { return x + 1.f; },
                        {.input_signature = {ag::TensorSpec({-1}, ag::float32, "x")}, .jit_compile = false,
                         .name = "inc"});
  expect_error<ag::ValueError>([&] { f.get_concrete_function(ag::TensorSpec({2, 3}, ag::float32)); },
                               {"argument 0 'x'", "Function 'inc'", "TensorSpec(shape=(2, 3), dtype=float32)",
                                "input_signature TensorSpec(shape=(None,), dtype=float32, name='x')"});
  expect_error<ag::TypeError>([&] { f.get_concrete_function(ag::TensorSpec({2}, ag::int32)); },
                              {"argument 0 'x'", "Function 'inc'", "dtype=int32", "dtype=float32"});
  EXPECT_EQ(f.tracing_count(), 0);
  // A spec the signature accepts gets the signature's own concrete function.
  auto cf = f.get_concrete_function(ag::TensorSpec({5}, ag::float32));
  EXPECT_EQ(cf.signature(), f.get_concrete_function().signature());
  EXPECT_EQ(f.tracing_count(), 1);

  // A known signature dim does not serve a spec that leaves it unknown.
  auto fixed = ag::function([](Tensor x) { return x; },
                            {.input_signature = {ag::TensorSpec({3}, ag::float32)}, .jit_compile = false});
  expect_error<ag::ValueError>([&] { fixed.get_concrete_function(ag::TensorSpec({-1}, ag::float32)); },
                               {"argument 0", "TensorSpec(shape=(None,)", "input_signature TensorSpec(shape=(3,)"});
}

}  // namespace
