// The native lowering of the TensorArray ops: the compiled code calls their typed helpers
// (agc_rt_list_*), works on the list's contiguous buffer, and agrees with eager and the
// interpreter: reads are snapshots, unwritten elements are zeros, dynamic arrays grow, a captured
// array is never changed by a call, and a bad index is a located InvalidArgumentError after
// which the Function still works.
#include "jit_test_util.h"

namespace {

using agtest::ir_calls;

// Writes squares in a staged loop, reads them back (scalars: registers), stacks and sizes.
ag::Tensor squares_and_sum(ag::Tensor n) {
  ag::TensorArray ta(ag::int32);
  ag::Tensor i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   ta.write(i, i * i);
                   i += 1;
                 },
                 ag::state(ta, i), {"ta", "i"}, AG_SOURCE_LOC("squares.cpp", 4));
  ag::Tensor sum = 0, j = 0;
  ag::while_stmt([&] { return j < ta.size(); },
                 [&] {
                   sum += ta.read(j);
                   j += 1;
                 },
                 ag::state(sum, j), {"sum", "j"}, AG_SOURCE_LOC("squares.cpp", 9));
  return ag::concat({ta.stack(), ag::reshape(sum, {1}), ag::reshape(ta.size(), {1})}, 0);
}

TEST(JitTensorArray, OpsCallTheirTypedHelpers) {
  for (int n : {1, 2, 9}) {
    const auto stats = agtest::expect_three_way("squares n=" + std::to_string(n), squares_and_sum, {}, ag::Tensor(n));
    EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
  }
  auto f = ag::function(squares_and_sum);
  const std::string ir = f.get_concrete_function(ag::Tensor(3)).llvm_ir(false);
  for (const char* helper : {"agc_rt_list_write", "agc_rt_list_read", "agc_rt_list_stack", "agc_rt_list_size"})
    EXPECT_TRUE(ir_calls(ir, helper)) << helper << "\n" << ir;
}

// A value read before its element is overwritten keeps the old value.
ag::Tensor read_then_overwrite(ag::Tensor x) {
  ag::TensorArray ta(ag::float32, 2);
  ta.write(0, x);
  ag::Tensor before = ta.read(0);
  ta.write(0, x * 10.0f);
  ag::Tensor after = ta.read(0);
  ag::Tensor unwritten = ta.read(1);  // the element shape is known: zeros
  return ag::concat({before, after, unwritten}, 0);
}

TEST(JitTensorArray, ReadsAreSnapshotsAndUnwrittenElementsAreZeros) {
  agtest::expect_three_way("read then overwrite", read_then_overwrite, {}, ag::constant({1.0f, -2.0f, 3.5f}));
}

// A dynamic array written past its end grows; the elements in between are zeros.
ag::Tensor grow_past_the_end(ag::Tensor x, ag::Tensor at) {
  ag::TensorArray ta(ag::float64, 1);
  ta.write(0, x);
  ta.write(at, x + 1.0);
  return ag::concat({ag::reshape(ta.stack(), {-1}), ag::reshape(ag::cast(ta.size(), ag::float64), {1})}, 0);
}

TEST(JitTensorArray, DynamicArraysGrow) {
  for (int64_t at : {1, 4, 17})
    agtest::expect_three_way("grow to " + std::to_string(at), grow_past_the_end, {},
                             ag::constant({0.25, 0.5}), ag::Tensor(at));
}

TEST(JitTensorArray, ACapturedArrayIsNeverChangedByACall) {
  ag::TensorArray captured(ag::float32, 2);
  captured.write(0, ag::constant({1.0f, 2.0f}));
  auto f = ag::function([&](ag::Tensor x) {
    ag::TensorArray ta = captured;
    ta.write(1, x);
    ta.write(0, ta.read(0) + x);
    return ta.stack();
  });
  const ag::Tensor x = ag::constant({10.0f, 20.0f});
  const ag::Tensor first = f(x), second = f(x);
  EXPECT_TRUE(agtest::same_tensor(first, second, {0, 0})) << first.str() << " then " << second.str();
  EXPECT_TRUE(agtest::same_tensor(ag::constant({11.0f, 22.0f}), first[0], {0, 0})) << first.str();
  EXPECT_TRUE(agtest::same_tensor(ag::constant({1.0f, 2.0f}), captured.read(0), {0, 0})) << captured.read(0).str();
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

// A write past the end of a fixed-size array, at an index computed in a staged loop.
ag::Tensor fill_fixed(ag::Tensor n) {
  ag::TensorArray ta(ag::int32, 3, /*dynamic_size=*/false);
  ag::Tensor i = 0;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   ta.write(i, i);
                   i += 1;
                 },
                 ag::state(ta, i), {"ta", "i"}, AG_SOURCE_LOC("fill_fixed.cpp", 5));
  return ta.stack();
}

TEST(JitTensorArray, AnIndexOutOfRangeIsALocatedErrorAndTheFunctionStillWorks) {
  auto f = ag::function(fill_fixed);
  EXPECT_TRUE(agtest::same_tensor(ag::constant({0, 1, 2}), f(ag::Tensor(3)), {0, 0}));
  std::string eager_message;
  try {
    fill_fixed(ag::Tensor(5));
  } catch (const ag::InvalidArgumentError& e) {
    eager_message = e.what();
  }
  try {
    f(ag::Tensor(5));
    ADD_FAILURE() << "no error for index 3 of a TensorArray of size 3";
  } catch (const ag::InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("index 3 is out of range for a TensorArray of size 3"), std::string::npos) << what;
    EXPECT_NE(what.find("tensor_array_native_test.cpp:"), std::string::npos) << what;
    EXPECT_EQ(what, eager_message);
  }
  EXPECT_TRUE(agtest::same_tensor(ag::constant({0, 1, 2}), f(ag::Tensor(2)) + ag::constant({0, 0, 2}), {0, 0}));
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

}  // namespace
