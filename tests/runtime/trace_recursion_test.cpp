// A function that calls itself under a staged if never stops recursing while tracing: tracing
// runs both branches whatever the condition. ag-rewrite reports direct recursion at build time;
// what it cannot see (hand-lowered code as here, calls through function pointers or into other
// files) meets the trace-depth guard: a ConversionError naming the Function and the construct
// that keeps nesting, instead of a stack overflow. The Function stays usable.
#include <pthread.h>

#include <string>

#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;

constexpr uint32_t kIfLine = __LINE__ + 7;
// `if (n > 1) r = n * fact(n - 1); else r = 1;` as ag-rewrite lowers it, with a C++ bound on
// the recursion: `levels` < 0 recurses until n <= 1, which only the tensor decides; eagerly
// that ends, traced it does not.
Tensor fact(Tensor n, int levels) {
  Tensor r = 1;
  if (levels == 0) return r;
  ag::if_stmt(
      n > 1, [&] { r = n * fact(n - 1, levels - 1); }, [&] { r = 1; }, ag::state(r), {"r"},
      AG_SOURCE_LOC("trace_recursion_test.cpp", kIfLine));
  return r;
}

const std::string kAt = "trace_recursion_test.cpp:" + std::to_string(kIfLine);

TEST(TraceRecursion, RecursionUnderAStagedIfRaisesAndTheFunctionStaysUsable) {
  auto f = ag::function(fact, {.jit_compile = false, .name = "fact"});
  EXPECT_EQ(fact(Tensor(5), -1).item<int32_t>(), 120);  // eagerly the tensor ends the recursion
  for (int attempt = 0; attempt < 2; ++attempt)
    expect_error<ag::ConversionError>([&] { (void)f(Tensor(5), -1); },
                                      {"staged control flow", "while tracing 'fact'", "the tensor-dependent if at " + kAt,
                                       "nested in itself", "calls itself", "RecursionError", "a while loop"});
  // Bounded by a C++ argument, the same function traces and runs.
  EXPECT_EQ(f(Tensor(5), 8).item<int32_t>(), 120);
  EXPECT_EQ(f(Tensor(7), 8).item<int32_t>(), 5040);
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(TraceRecursion, NestingBeyondTheLimitIsReportedAtTheLimit) {
  auto f = ag::function(fact, {.jit_compile = false, .name = "fact"});
  expect_error<ag::ConversionError>([&] { (void)f(Tensor(5), 5000); }, {"while tracing 'fact'", kAt});
  EXPECT_EQ(f(Tensor(4), 200).item<int32_t>(), 24);  // deep, but within the limit
}

// A thread with a small stack: the guard looks at the stack left, not only at the depth.
void* trace_on_this_thread(void* message) {
  auto f = ag::function(fact, {.jit_compile = false, .name = "fact"});
  try {
    (void)f(Tensor(5), -1);
  } catch (const ag::ConversionError& e) {
    *static_cast<std::string*>(message) = e.what();
  }
  return nullptr;
}

TEST(TraceRecursion, ASmallThreadStackRaisesInsteadOfOverflowing) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, size_t{512} << 10), 0);
  std::string message;
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, trace_on_this_thread, &message), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_NE(message.find("while tracing 'fact'"), std::string::npos) << message;
  EXPECT_NE(message.find("stack"), std::string::npos) << message;
}

}  // namespace
