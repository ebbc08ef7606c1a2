// The per-Function inline cache (docs/performance.md, "W4"): a call with the signature of the
// previous lookup is served without a table lookup (stats().inline_hits says it was), and never
// serves a call whose signature differs, whatever the kind of argument.
#include <atomic>
#include <thread>

#include "../common/evict_after_inline_hits.h"
#include "test_util.h"

namespace {

using ag::Tensor;

TEST(InlineCache, RepeatedSignatureIsServedInline) {
  auto f = ag::function([](Tensor x) { return x * 2; }, agtest::interpreted());
  const Tensor x = ag::constant({1.f, 2.f});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(f(x).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  // The trace, one table lookup that makes the entry inline, then 8 inline hits.
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().memory_hits, 9);
  EXPECT_EQ(f.stats().inline_hits, 8);
}

TEST(InlineCache, AlternatingSignaturesAreNeverServedByTheOtherEntry) {
  auto f = ag::function([](Tensor x) { return ag::reduce_sum(x) + ag::cast(ag::shape_of(x)[0], ag::float32); },
                        agtest::interpreted());
  const Tensor a = ag::ones({2}), b = ag::ones({3});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(f(a).item<float>(), 4.f) << i;
    EXPECT_EQ(f(b).item<float>(), 6.f) << i;
  }
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.stats().inline_hits, 0);  // each call's signature differs from the previous lookup's
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f(b).item<float>(), 6.f);
  EXPECT_EQ(f.stats().inline_hits, 5);  // the loop's last lookup was b's
}

// The inline cache is per thread: two threads calling with different signatures each keep
// theirs (one shared entry would flip on every call and serve neither).
TEST(InlineCache, ThreadsWithDifferentSignaturesEachKeepTheirOwn) {
  auto f = ag::function([](Tensor x) { return x * 2; }, agtest::interpreted());
  constexpr int kCalls = 1000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      const Tensor x = ag::ones({t + 1});
      for (int i = 0; i < kCalls; ++i)
        if (f(x).to_vector<float>() != std::vector<float>(static_cast<size_t>(t + 1), 2.f)) ++wrong;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
  // Per thread: at most the trace and one table lookup are not inline.
  EXPECT_GE(f.stats().inline_hits, 2 * (kCalls - 2));
}

// Every kind of argument the inline check compares (call_has_key) against the key the table
// stores (build_key): a change of any one must miss and give the eager result.
TEST(InlineCache, EveryArgumentKindTakesPartInTheCheck) {
  ag::Variable v1(ag::constant({1.f})), v2(ag::constant({10.f, 20.f}));
  auto body = [](Tensor x, int n, double s, bool neg, std::vector<int> ks, std::vector<Tensor> ws, ag::Variable& v) {
    Tensor y = x * static_cast<float>(n) * static_cast<float>(s) + v.read_value();
    if (neg) y = -y;
    for (int k : ks) y = y + static_cast<float>(k);
    for (const Tensor& w : ws) y = y + ag::reduce_sum(w);
    return y;
  };
  auto f = ag::function(body, agtest::interpreted());
  struct Call {
    Tensor x;
    int n;
    double s;
    bool neg;
    std::vector<int> ks;
    std::vector<Tensor> ws;
    ag::Variable* v;
  };
  const Tensor x1 = ag::constant({1.f}), x2 = ag::constant({1.f, 2.f}), xi = ag::constant({1});
  const std::vector<Call> calls = {
      {x1, 2, 0.5, false, {1}, {ag::ones({2})}, &v1},
      {x1, 3, 0.5, false, {1}, {ag::ones({2})}, &v1},          // int
      {x1, 3, 0.25, false, {1}, {ag::ones({2})}, &v1},         // double
      {x1, 3, 0.25, true, {1}, {ag::ones({2})}, &v1},          // bool
      {x1, 3, 0.25, true, {1, 2}, {ag::ones({2})}, &v1},       // list length
      {x1, 3, 0.25, true, {1, 3}, {ag::ones({2})}, &v1},       // list value
      {x1, 3, 0.25, true, {1, 3}, {ag::ones({3})}, &v1},       // tensor in a container: shape
      {x1, 3, 0.25, true, {1, 3}, {ag::ones({3}), ag::ones({1})}, &v1},  // container length
      {x2, 3, 0.25, true, {1, 3}, {ag::ones({3}), ag::ones({1})}, &v1},  // tensor shape
      {x2, 3, 0.25, true, {1, 3}, {ag::ones({3}), ag::ones({1})}, &v2},  // a Variable of another shape
  };
  for (size_t i = 0; i < calls.size(); ++i)
    for (int rep = 0; rep < 3; ++rep) {
      const Call& c = calls[i];
      const Tensor want = body(c.x, c.n, c.s, c.neg, c.ks, c.ws, *c.v);
      EXPECT_EQ(want.to_vector<float>(), f(c.x, c.n, c.s, c.neg, c.ks, c.ws, *c.v).to_vector<float>()) << "call " << i << " rep " << rep;
    }
  EXPECT_EQ(f.stats().traces, static_cast<int64_t>(calls.size()));
  EXPECT_EQ(f.stats().inline_hits, static_cast<int64_t>(calls.size()));  // the third call of each
  // A tensor of another dtype with the same shape misses too.
  auto g = ag::function([](Tensor x) { return x + x; }, agtest::interpreted());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(g(x1).to_vector<float>(), std::vector<float>{2.f});
  EXPECT_EQ(g(xi).to_vector<int32_t>(), std::vector<int32_t>{2});
  EXPECT_EQ(g.stats().traces, 2);
}

// With an input_signature, the key is built first (it checks the arguments): bad arguments
// still get their error after the inline cache is warm.
TEST(InlineCache, InputSignatureChecksStillRunOnTheInlinePath) {
  auto f = ag::function([](Tensor x) { return x * 3; },
                        {.input_signature = {ag::TensorSpec({-1}, ag::float32)}, .jit_compile = false});
  for (int n = 1; n <= 4; ++n) EXPECT_EQ(f(ag::ones({n})).num_elements(), n);
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_GT(f.stats().inline_hits, 0);
  AG_EXPECT_ERROR(ag::TypeError, f(ag::ones({2}, ag::int32)), "dtype int32", "input_signature");
  AG_EXPECT_ERROR(ag::ValueError, f(ag::ones({2, 2})), "shape", "input_signature");
  AG_EXPECT_ERROR(ag::ValueError, f(Tensor()), "has no value");
  auto g = ag::function([](Tensor x) { return x * 3; }, agtest::interpreted());
  g(ag::ones({2}));
  g(ag::ones({2}));
  AG_EXPECT_ERROR(ag::ValueError, g(Tensor()), "has no value");
}

// Threads calling in bursts of one signature (the inline path) while the cache of 2 evicts
// constantly and another thread evicts everything: every result right, and no entry freed
// under a caller (AddressSanitizer and ThreadSanitizer builds run this too).
TEST(InlineCache, BurstsOfOneSignatureUnderConstantEviction) {
  auto f = ag::function([](Tensor x) { return x + 1; }, {.jit_compile = false, .max_cached = 2});
  ag::set_log_sink([](std::string_view) {});  // the retrace warning this test earns on purpose
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const int n = 1 + (i / 50 + t) % 4;  // 4 signatures, 50 calls each in turn
        const Tensor y = f(ag::zeros({n}));
        if (y.num_elements() != n || y.to_vector<float>()[0] != 1.f) ++wrong;
      }
    });
  const int rounds_with_hits = agtest::evict_after_inline_hits(f, 100);
  stop = true;
  for (auto& th : threads) th.join();
  ag::set_log_sink(nullptr);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(f.stats().evictions, 0);
  EXPECT_EQ(rounds_with_hits, 100);
}

}  // namespace
