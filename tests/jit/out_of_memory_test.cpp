// Out of memory in compiled code is an ag::ResourceExhaustedError of that call, as eagerly and in
// the interpreter, naming the op, the tensor's dtype and shape, the bytes and the user's line:
// for a shape known at compile time (a result allocated before the call, an intermediate in the
// function's arena) and for one that comes from run-time data (a result or intermediate the code
// allocates). Nothing leaks and the function stays usable.
#include <string>

#include "../common/address_space_cap.h"
#include "jit_test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_raises;

using agtest::kHugeBytes;
using agtest::kHugeShape;
using agtest::kMi;
// int64 [2^39]: 4 TiB too.
Tensor too_many() { return Tensor(int64_t{1} << 39); }

std::string here(int line) { return "out_of_memory_test.cpp:" + std::to_string(line); }

template <class F, class... Args>
void expect_out_of_memory(F& f, std::initializer_list<std::string> needles, const Args&... args) {
  const size_t live = ag::memory_stats().live_bytes;
  expect_raises<ag::ResourceExhaustedError>(f, needles, args...);
  EXPECT_EQ(ag::memory_stats().live_bytes, live) << "a buffer of the failed call is still allocated";
}

constexpr int kFillResultLine = __LINE__ + 2;
Tensor huge_result(Tensor v) {
  return ag::fill({kMi, kMi}, v);
}

constexpr int kFillOperandLine = __LINE__ + 2;
Tensor huge_intermediate_static(Tensor v) {
  const Tensor big = ag::fill({kMi, kMi}, v);  // a matmul operand: materialized in the arena
  return ag::matmul(big, ag::fill({kMi, 1}, v));
}

constexpr int kRangeLine = __LINE__ + 2;
Tensor huge_range(Tensor n) {
  return ag::range(n);
}

Tensor huge_intermediate_dynamic(Tensor n) {
  Tensor r = ag::range(n);
  Tensor i = 0;
  ag::while_stmt([&] { return i < 1; }, [&] { r = r + int64_t{1}; i += 1; }, ag::state(r, i), {"r", "i"},
                 AG_SOURCE_LOC("oom.cpp", 7));
  return ag::reduce_sum(r);
}

TEST(JitOutOfMemory, StaticShapes) {
  agtest::AddressSpaceCap cap;
  auto result = ag::function(huge_result);
  expect_out_of_memory(result, {"ag::fill: out of memory", "float32", kHugeShape, kHugeBytes, here(kFillResultLine)},
                       Tensor(1.0f));
  auto intermediate = ag::function(huge_intermediate_static);
  expect_out_of_memory(intermediate,
                       {"ag::fill: out of memory", kHugeShape, kHugeBytes, "in one block of", here(kFillOperandLine)},
                       Tensor(1.0f));
  // The compiled code (not the interpreter) raised it, and the message never claims the shape
  // comes from run-time data.
  EXPECT_EQ(intermediate.stats().compiles + intermediate.stats().disk_hits, 1);
  try {
    intermediate(Tensor(1.0f));
  } catch (const ag::ResourceExhaustedError& e) {
    EXPECT_EQ(std::string(e.what()).find("run-time data"), std::string::npos) << e.what();
  }
}

TEST(JitOutOfMemory, RunTimeShapes) {
  agtest::AddressSpaceCap cap;
  auto out = ag::function(huge_range);
  expect_out_of_memory(out, {"ag::range: out of memory", "int64", "[549755813888]", kHugeBytes, here(kRangeLine)},
                       too_many());
  EXPECT_TRUE(agtest::same_tensor(huge_range(Tensor(int64_t{5})), out(Tensor(int64_t{5}))));
  auto mid = ag::function(huge_intermediate_dynamic);
  expect_out_of_memory(mid, {"out of memory", "int64", "[549755813888]", kHugeBytes}, too_many());
  EXPECT_TRUE(agtest::same_tensor(huge_intermediate_dynamic(Tensor(int64_t{5})), mid(Tensor(int64_t{5}))));
  EXPECT_EQ(out.stats().compiles + out.stats().disk_hits, 1);
}

// The interpreter raises the same error for the same functions.
TEST(JitOutOfMemory, TheInterpreterAgrees) {
  agtest::AddressSpaceCap cap;
  auto result = ag::function(huge_result, {.jit_compile = false});
  expect_out_of_memory(result, {"ag::fill: out of memory", kHugeShape, kHugeBytes, here(kFillResultLine)}, Tensor(1.0f));
  auto out = ag::function(huge_range, {.jit_compile = false});
  expect_out_of_memory(out, {"ag::range: out of memory", "[549755813888]", kHugeBytes, here(kRangeLine)}, too_many());
}

}  // namespace
