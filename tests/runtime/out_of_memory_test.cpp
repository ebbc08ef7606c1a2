// Out of memory is an ag::ResourceExhaustedError (as in TensorFlow), eagerly and in the graph
// interpreter, naming the op, the tensor's dtype and shape, the bytes it needs and the user's
// line. Nothing leaks, and the process (and the Function) keep working.
#include <string>

#include "../common/address_space_cap.h"
#include "test_util.h"

namespace {

using ag::Tensor;
using agtest::expect_error;

using agtest::kHugeBytes;
using agtest::kHugeShape;
using agtest::kMi;

std::string here(int line) { return "out_of_memory_test.cpp:" + std::to_string(line); }

TEST(OutOfMemory, EagerConstructorsRaiseResourceExhausted) {
  agtest::AddressSpaceCap cap;
  const size_t live = ag::memory_stats().live_bytes;
  int line = __LINE__ + 1;
  expect_error<ag::ResourceExhaustedError>([&] { (void)ag::zeros({kMi, kMi}); },
                                           {"ag::zeros: out of memory", "float32", kHugeShape, kHugeBytes, here(line)});
  line = __LINE__ + 1;
  expect_error<ag::ResourceExhaustedError>([&] { (void)ag::ones({kMi, kMi}, ag::int64); },
                                           {"ag::ones", "int64", kHugeShape, "8796093022208 bytes, 8.0 TiB", here(line)});
  line = __LINE__ + 1;
  expect_error<ag::ResourceExhaustedError>([&] { (void)ag::random_uniform({kMi, kMi}); },
                                           {"ag::random_uniform", kHugeShape, here(line)});
  // An element count beyond 64 bits is out of memory too, not a small buffer for a huge tensor.
  line = __LINE__ + 1;
  expect_error<ag::ResourceExhaustedError>([&] { (void)ag::zeros({kMi * kMi, kMi * kMi}); },
                                           {"ag::zeros", "more than 64-bit sizes can count", here(line)});
  EXPECT_EQ(ag::memory_stats().live_bytes, live);
  EXPECT_EQ(ag::zeros({2, 3}).to_vector<float>(), std::vector<float>(6, 0.0f));  // still works
}

TEST(OutOfMemory, EagerOpsRaiseResourceExhausted) {
  agtest::AddressSpaceCap cap;
  const size_t live = ag::memory_stats().live_bytes;
  {
    int line = __LINE__ + 1;
    expect_error<ag::ResourceExhaustedError>([&] { (void)ag::fill({kMi, kMi}, Tensor(1.5f)); },
                                             {"ag::fill: out of memory", kHugeShape, kHugeBytes, here(line)});
    // A shape computed from run-time data: the message has the run-time shape.
    line = __LINE__ + 1;
    expect_error<ag::ResourceExhaustedError>([&] { (void)ag::range(int64_t{1} << 39); },
                                             {"ag::range", "int64", "[549755813888]", kHugeBytes, here(line)});
    // Broadcasting two 4 MB operands into a 4 TiB result.
    const Tensor column = ag::zeros({kMi, 1}), row = ag::zeros({1, kMi});
    line = __LINE__ + 1;
    expect_error<ag::ResourceExhaustedError>([&] { (void)(column + row); },
                                             {"operator+ (ag::add)", kHugeShape, kHugeBytes, here(line)});
    EXPECT_EQ((column + 1.0f).shape(), ag::Shape({kMi, 1}));
  }
  EXPECT_EQ(ag::memory_stats().live_bytes, live);
}

constexpr int kFillLine = __LINE__ + 2;
Tensor huge_fill(Tensor v) {
  return ag::reduce_sum(ag::fill({kMi, kMi}, v)) + v;
}
constexpr int kRangeLine = __LINE__ + 2;
Tensor huge_range(Tensor n) {
  return ag::range(n) * 2;
}

TEST(OutOfMemory, InterpreterRaisesResourceExhaustedAndStaysUsable) {
  agtest::AddressSpaceCap cap;
  auto fill = ag::function(huge_fill, agtest::interpreted());
  expect_error<ag::ResourceExhaustedError>([&] { (void)fill(Tensor(2.0f)); },
                                           {"ag::fill: out of memory", kHugeShape, kHugeBytes, here(kFillLine)});
  auto range = ag::function(huge_range, agtest::interpreted());
  const size_t live = ag::memory_stats().live_bytes;
  expect_error<ag::ResourceExhaustedError>([&] { (void)range(Tensor(int64_t{1} << 39)); },
                                           {"ag::range", "[549755813888]", kHugeBytes, here(kRangeLine)});
  EXPECT_EQ(ag::memory_stats().live_bytes, live);
  EXPECT_EQ(range(Tensor(int64_t{3})).to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(range.tracing_count(), 1);
}

}  // namespace
